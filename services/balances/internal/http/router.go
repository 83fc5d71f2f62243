// Package http is the balances service's HTTP layer: its public routes (reached through the
// edge) and its /internal API for other services. Handlers parse the request (parse.go), call
// app, and map its typed errors to statuses here only.
package http

import (
	"errors"
	"net/http"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/balances/internal/app"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/gin-gonic/gin"
)

// Register adds the service's routes to e (which verifies identities).
func Register(e *gin.Engine, a *app.App) {
	h := &handlers{a: a}
	e.GET("/balances/address/:address", h.addressBalances)
	e.GET("/balances/entity/:entity", h.entityBalances)
	e.GET("/balances/solana/subaccounts/address/:addresses", h.subaccountsByAddress)
	e.GET("/balances/solana/subaccounts/entity/:entities", h.subaccountsByEntity)
	e.GET("/history/address/:address", h.history(false))
	e.GET("/history/entity/:entity", h.history(true))
	e.GET("/portfolio/address/:address", h.portfolio(false))
	e.GET("/portfolio/entity/:entity", h.portfolio(true))
	e.GET("/portfolio/timeSeries/address/:address", h.timeSeries(false))
	e.GET("/portfolio/timeSeries/entity/:entity", h.timeSeries(true))
	e.GET("/token/balance/:id", h.tokenBalance)
	e.GET("/token/balance/:id/:address", h.tokenBalance)
	e.GET("/token/holders/:id", h.holders)
	e.GET("/token/holders/:id/:address", h.holders)
	e.POST("/internal/balances/usd", httpx.BodyLimit(MaxInternalBody), h.usdTotals)
}

// MaxInternalBody bounds the internal totals call's body: 10,000 of the longest addresses fit.
const MaxInternalBody = 2 << 20

type handlers struct{ a *app.App }

// fail maps an error to its status: bad parameters 400, unknown subjects 404, the rest 500.
func fail(c *gin.Context, err error) {
	var pe *params.Error
	var ape *app.ParamError
	var nf *app.NotFoundError
	switch {
	case errors.As(err, &pe):
		httpx.Error(c, http.StatusBadRequest, pe.Error())
	case errors.As(err, &ape):
		httpx.Error(c, http.StatusBadRequest, ape.Error())
	case errors.As(err, &nf):
		httpx.Error(c, http.StatusNotFound, nf.Error())
	default:
		httpx.Fail(c, err)
	}
}

func answer(c *gin.Context, v any, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, v)
}

func (h *handlers) addressBalances(c *gin.Context) {
	addr, err := pathValue("address", c.Param("address"))
	if err != nil {
		fail(c, err)
		return
	}
	q, err := ParseChains(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.AddressBalances(c.Request.Context(), addr, q.Chains)
	answer(c, v, err)
}

func (h *handlers) entityBalances(c *gin.Context) {
	id, err := pathValue("entity", c.Param("entity"))
	if err != nil {
		fail(c, err)
		return
	}
	q, err := ParseEntityBalances(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	// q.Cheap is validated but changes nothing: every operator entity answer reads the
	// maintained totals (app.EntityBalances).
	v, err := h.a.EntityBalances(c.Request.Context(), id, q.Chains)
	answer(c, v, err)
}

// subject resolves the route's address or entity path parameter on chains.
func (h *handlers) subject(c *gin.Context, entity bool, chains []string) (app.Subject, error) {
	name := "address"
	if entity {
		name = "entity"
	}
	v, err := pathValue(name, c.Param(name))
	if err != nil {
		return app.Subject{}, err
	}
	if entity {
		return h.a.EntitySubject(c.Request.Context(), v, chains)
	}
	return h.a.AddressSubject(v, chains)
}

func (h *handlers) history(entity bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := ParseChains(c.Request.URL.Query())
		if err != nil {
			fail(c, err)
			return
		}
		s, err := h.subject(c, entity, q.Chains)
		if err != nil {
			fail(c, err)
			return
		}
		v, err := h.a.History(c.Request.Context(), s)
		answer(c, v, err)
	}
}

func (h *handlers) portfolio(entity bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := ParsePortfolio(c.Request.URL.Query(), h.a.Now())
		if err != nil {
			fail(c, err)
			return
		}
		s, err := h.subject(c, entity, q.Chains)
		if err != nil {
			fail(c, err)
			return
		}
		v, err := h.a.Portfolio(c.Request.Context(), s, q.Time)
		answer(c, v, err)
	}
}

func (h *handlers) timeSeries(entity bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := ParseTimeSeries(c.Request.URL.Query())
		if err != nil {
			fail(c, err)
			return
		}
		s, err := h.subject(c, entity, q.Chains)
		if err != nil {
			fail(c, err)
			return
		}
		v, err := h.a.TimeSeries(c.Request.Context(), s, q.PricingID)
		answer(c, v, err)
	}
}

// tokenRef reads /{id} or /{chain}/{address}.
func tokenRef(c *gin.Context) (app.TokenRef, error) {
	id, err := pathValue("id", c.Param("id"))
	if err != nil {
		return app.TokenRef{}, err
	}
	if c.Param("address") == "" {
		return app.TokenRef{PricingID: id}, nil
	}
	ch, ok := chains.Lookup(id)
	if !ok {
		return app.TokenRef{}, params.Errorf("chain", "unknown chain %q", id)
	}
	addr, err := pathValue("address", c.Param("address"))
	if err != nil {
		return app.TokenRef{}, err
	}
	n, err := address.Normalize(ch.Type, addr)
	if err != nil {
		return app.TokenRef{}, params.Errorf("address", "not a %s address", ch.Type)
	}
	return app.TokenRef{Chain: ch.Name, Address: n}, nil
}

func (h *handlers) tokenBalance(c *gin.Context) {
	r, err := tokenRef(c)
	if err != nil {
		fail(c, err)
		return
	}
	q, err := ParseTokenBalance(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.TokenBalance(c.Request.Context(), r, q.EntityID, q.Address)
	answer(c, v, err)
}

func (h *handlers) holders(c *gin.Context) {
	r, err := tokenRef(c)
	if err != nil {
		fail(c, err)
		return
	}
	q, err := ParseHolders(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.Holders(c.Request.Context(), r, q)
	answer(c, v, err)
}

func (h *handlers) subaccountsByAddress(c *gin.Context) {
	q, err := ParseSubaccounts("addresses", c.Param("addresses"), c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	owners := make([]string, 0, len(q.Items))
	for _, a := range q.Items {
		n, err := address.Normalize(chains.TypeSolana, a)
		if err != nil {
			fail(c, params.Errorf("addresses", "%q is not a solana address", a))
			return
		}
		owners = append(owners, n)
	}
	v, err := h.a.Subaccounts(c.Request.Context(), owners, nil, q.PricingID, q.Limit)
	answer(c, v, err)
}

func (h *handlers) subaccountsByEntity(c *gin.Context) {
	q, err := ParseSubaccounts("entities", c.Param("entities"), c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.Subaccounts(c.Request.Context(), nil, q.Items, q.PricingID, q.Limit)
	answer(c, v, err)
}

// usdBody is the internal totals request.
type usdBody struct {
	Addresses []struct {
		ChainType string `json:"chainType"`
		Address   string `json:"address"`
	} `json:"addresses"`
	Entities []string `json:"entities"`
}

// usdTotals answers POST /internal/balances/usd: the USD value of the current balances of each
// address and each operator entity given.
func (h *handlers) usdTotals(c *gin.Context) {
	var b usdBody
	if !httpx.BindJSON(c, &b) {
		return
	}
	if len(b.Addresses) > MaxInternalRefs {
		httpx.Errorf(c, http.StatusBadRequest, "addresses: more than %d", MaxInternalRefs)
		return
	}
	if len(b.Entities) > MaxInternalEntity {
		httpx.Errorf(c, http.StatusBadRequest, "entities: more than %d", MaxInternalEntity)
		return
	}
	refs := make([]store.Ref, 0, len(b.Addresses))
	for _, r := range b.Addresses {
		t, err := chains.ParseType(r.ChainType)
		if err != nil {
			httpx.Errorf(c, http.StatusBadRequest, "addresses: %v", err)
			return
		}
		n, err := address.Normalize(t, r.Address)
		if err != nil {
			httpx.Errorf(c, http.StatusBadRequest, "addresses: %q is not a %s address", r.Address, t)
			return
		}
		refs = append(refs, store.Ref{ChainType: string(t), Address: n})
	}
	v, err := h.a.USDTotals(c.Request.Context(), refs, b.Entities)
	answer(c, v, err)
}
