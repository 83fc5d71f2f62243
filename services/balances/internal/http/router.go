// Package http is the balances service's HTTP layer: its public routes (reached through the
// edge) and its /internal API for other services. Handlers parse the request (parse.go), call
// app, and map its typed errors to statuses here only.
package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

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
	e.GET("/balances/address/:address", pathRoute(param("address"), ParseChains, h.addressBalances))
	e.GET("/balances/entity/:entity", pathRoute(param("entity"), ParseEntityBalances, h.entityBalances))
	e.GET("/balances/solana/subaccounts/address/:addresses", pathRoute(subaccounts("addresses"), noQuery, h.subaccountsByAddress))
	e.GET("/balances/solana/subaccounts/entity/:entities", pathRoute(subaccounts("entities"), noQuery, h.subaccountsByEntity))
	e.GET("/history/address/:address", subjectRoute(h, false, ParseChains, h.history))
	e.GET("/history/entity/:entity", subjectRoute(h, true, ParseChains, h.history))
	e.GET("/portfolio/address/:address", subjectRoute(h, false, h.parsePortfolio, h.portfolio))
	e.GET("/portfolio/entity/:entity", subjectRoute(h, true, h.parsePortfolio, h.portfolio))
	e.GET("/portfolio/timeSeries/address/:address", subjectRoute(h, false, ParseTimeSeries, h.timeSeries))
	e.GET("/portfolio/timeSeries/entity/:entity", subjectRoute(h, true, ParseTimeSeries, h.timeSeries))
	e.GET("/token/balance/:id", pathRoute(tokenRef, ParseTokenBalance, h.tokenBalance))
	e.GET("/token/balance/:id/:address", pathRoute(tokenRef, ParseTokenBalance, h.tokenBalance))
	e.GET("/token/holders/:id", pathRoute(tokenRef, ParseHolders, h.holders))
	e.GET("/token/holders/:id/:address", pathRoute(tokenRef, ParseHolders, h.holders))
	e.GET("/intelligence/entity_balance_changes", pathRoute(noPath, ParseEntityBalanceChanges, h.entityBalanceChanges))
	e.POST("/internal/balances/usd", httpx.BodyLimit(MaxInternalBody), h.usdTotals)
}

// MaxInternalBody bounds the internal totals call's body: 10,000 of the longest addresses fit.
const MaxInternalBody = 2 << 20

type handlers struct{ a *app.App }

// fail maps an error to its status: bad parameters 400, unknown subjects 404, a read past its
// statement timeout 503 (with Retry-After, naming the read and its limit), the rest as httpx.Fail.
func fail(c *gin.Context, err error) {
	var pe *params.Error
	var ape *app.ParamError
	var nf *app.NotFoundError
	var te *store.TimeoutError
	switch {
	case errors.As(err, &te):
		c.Header("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds))
		httpx.Error(c, http.StatusServiceUnavailable, te.Error()+"; narrow it with filters or retry later")
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

// pathRoute serves a route of what its path names (read by path) and its query (read by
// query, after the path); a reading's error is answered by fail, do's answer by answer.
func pathRoute[P, Q any](path func(*gin.Context) (P, error), query func(url.Values) (Q, error),
	do func(context.Context, P, Q) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := path(c)
		if err != nil {
			fail(c, err)
			return
		}
		q, err := query(c.Request.URL.Query())
		if err != nil {
			fail(c, err)
			return
		}
		v, err := do(c.Request.Context(), p, q)
		answer(c, v, err)
	}
}

// chainsQuery is a query that names the chains of the route's subject.
type chainsQuery interface{ chainList() []string }

func (q ChainsQuery) chainList() []string     { return q.Chains }
func (q PortfolioQuery) chainList() []string  { return q.Chains }
func (q TimeSeriesQuery) chainList() []string { return q.Chains }

// subjectRoute serves a route of an address or entity subject (entity says which path
// parameter names it). The query is read first: the subject is resolved on its chains.
func subjectRoute[Q chainsQuery](h *handlers, entity bool, query func(url.Values) (Q, error),
	do func(context.Context, app.Subject, Q) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := query(c.Request.URL.Query())
		if err != nil {
			fail(c, err)
			return
		}
		s, err := h.subject(c, entity, q.chainList())
		if err != nil {
			fail(c, err)
			return
		}
		v, err := do(c.Request.Context(), s, q)
		answer(c, v, err)
	}
}

// param reads the path parameter name.
func param(name string) func(*gin.Context) (string, error) {
	return func(c *gin.Context) (string, error) { return pathValue(name, c.Param(name)) }
}

// subaccounts reads a subaccounts route: its path list (the path parameter name) and query.
func subaccounts(name string) func(*gin.Context) (SubaccountsQuery, error) {
	return func(c *gin.Context) (SubaccountsQuery, error) {
		return ParseSubaccounts(name, c.Param(name), c.Request.URL.Query())
	}
}

// noPath is the path reading of a route whose path names nothing.
func noPath(*gin.Context) (struct{}, error) { return struct{}{}, nil }

// noQuery is the query reading of a route whose path reading reads its query too.
func noQuery(url.Values) (struct{}, error) { return struct{}{}, nil }

func (h *handlers) parsePortfolio(q url.Values) (PortfolioQuery, error) {
	return ParsePortfolio(q, h.a.Now())
}

func (h *handlers) addressBalances(ctx context.Context, addr string, q ChainsQuery) (any, error) {
	return h.a.AddressBalances(ctx, addr, q.Chains)
}

// entityBalances: q.Cheap is validated but changes nothing, as every operator entity answer
// reads the maintained totals (app.EntityBalances).
func (h *handlers) entityBalances(ctx context.Context, id string, q EntityBalancesQuery) (any, error) {
	return h.a.EntityBalances(ctx, id, q.Chains)
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

func (h *handlers) history(ctx context.Context, s app.Subject, _ ChainsQuery) (any, error) {
	return h.a.History(ctx, s)
}

func (h *handlers) portfolio(ctx context.Context, s app.Subject, q PortfolioQuery) (any, error) {
	return h.a.Portfolio(ctx, s, q.Time)
}

func (h *handlers) timeSeries(ctx context.Context, s app.Subject, q TimeSeriesQuery) (any, error) {
	return h.a.TimeSeries(ctx, s, q.PricingID)
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
		// API.md: an address of an unknown format for the chain is a 404, as on the other
		// token routes.
		return app.TokenRef{}, &app.NotFoundError{Msg: fmt.Sprintf("token address %q is not a %s address", addr, ch.Type)}
	}
	return app.TokenRef{Chain: ch.Name, Address: n}, nil
}

func (h *handlers) tokenBalance(ctx context.Context, r app.TokenRef, q TokenBalanceQuery) (any, error) {
	return h.a.TokenBalance(ctx, r, q.EntityID, q.Address)
}

func (h *handlers) holders(ctx context.Context, r app.TokenRef, q app.HoldersQuery) (any, error) {
	return h.a.Holders(ctx, r, q)
}

func (h *handlers) entityBalanceChanges(ctx context.Context, _ struct{}, q app.RankingQuery) (any, error) {
	return h.a.EntityBalanceChanges(ctx, q)
}

func (h *handlers) subaccountsByAddress(ctx context.Context, q SubaccountsQuery, _ struct{}) (any, error) {
	owners := make([]string, 0, len(q.Items))
	for _, a := range q.Items {
		n, err := address.Normalize(chains.TypeSolana, a)
		if err != nil {
			return nil, &app.NotFoundError{Msg: fmt.Sprintf("address %q is not a solana address", a)}
		}
		owners = append(owners, n)
	}
	return h.a.Subaccounts(ctx, owners, nil, q.PricingID, q.Limit)
}

func (h *handlers) subaccountsByEntity(ctx context.Context, q SubaccountsQuery, _ struct{}) (any, error) {
	return h.a.Subaccounts(ctx, nil, q.Items, q.PricingID, q.Limit)
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
