// Package http is the token-analytics service's HTTP layer: its public routes (reached through
// the edge: /token/top, /token/top_flow/*, /token/volume/*, /token/trending*, /token/market/*,
// /token/price/history/*, /token/price_change/*, /token/addresses/*, /marketdata/altcoin_index, /native/circulating, /networks/history/{chain}, /networks/status) and its /internal API (the market data of a
// token, for intelligence; which pricing ids the registry knows, for transfers; the price points of a window, for ingest). Handlers check parameters, call app, and map its errors to the one
// error shape.
package http

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/chainintel/chainintel/libs/address"
	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// Register adds the service's routes to e.
func Register(e *gin.Engine, svc *app.Service, set *chains.Set) {
	h := &handlers{svc: svc, set: set}
	e.GET("/token/top", h.top)
	e.GET("/token/top_flow/:id", h.topFlow)
	e.GET("/token/top_flow/:id/:address", h.topFlow)
	e.GET("/token/volume/:id", h.volume)
	e.GET("/token/volume/:id/:address", h.volume)
	e.GET("/token/trending", h.trending)
	e.GET("/token/trending/:id", h.trendingOne)
	e.GET("/token/market/:id", h.marketData)
	e.GET("/token/price/history/:id", h.priceHistory)
	e.GET("/token/price/history/:id/:address", h.priceHistory)
	e.GET("/token/price_change/:id", h.priceChange)
	e.GET("/token/addresses/:id", h.addresses)
	e.GET("/marketdata/altcoin_index", h.altcoinIndex)
	e.GET("/native/circulating", h.circulating)
	e.GET("/token/service_exchange_tokens", h.exchangeTokens)
	e.GET("/networks/history/:chain", h.networkHistory)
	e.GET("/networks/status", h.networkStatus)
	e.GET("/internal/tokens/:id", h.market)
	e.GET("/internal/tokens/:id/:address", h.market)
	// POST: the GET routes' /internal/tokens/:id would take "known" for a pricing id.
	e.POST("/internal/tokens/known", h.known)
	e.POST("/internal/prices/window", h.priceWindow)
}

// MaxKnownIDs is the most pricing ids one POST /internal/tokens/known asks about (a transfers
// filter's tokens parameter takes as many).
const MaxKnownIDs = 1000

type knownBody struct {
	IDs []string `json:"ids"`
}

// known answers POST /internal/tokens/known {"ids":[...]} with {"known":[...]}: the ids the
// registry holds, sorted; the others are unknown. One statement, whatever the number of ids.
func (h *handlers) known(c *gin.Context) {
	var b knownBody
	if !httpx.BindJSON(c, &b) {
		return
	}
	if len(b.IDs) > MaxKnownIDs {
		httpx.Errorf(c, http.StatusBadRequest, "ids: more than %d", MaxKnownIDs)
		return
	}
	for _, id := range b.IDs {
		if err := PricingID(id); err != nil {
			httpx.Errorf(c, http.StatusBadRequest, "ids: %q must be a pricing id such as ethereum", params.Trunc(id))
			return
		}
	}
	known, err := h.svc.KnownIDs(c.Request.Context(), b.IDs)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, knownAnswer{Known: known})
}

type knownAnswer struct {
	Known []string `json:"known"`
}

type handlers struct {
	svc *app.Service
	set *chains.Set
}

// fail maps an error to its status: bad parameters and a past time before a token's first price
// 400, unknown tokens 404, missing market
// data 503, anything else 500 (details logged, never shown).
func fail(c *gin.Context, err error) {
	var pe *params.Error
	switch {
	case errors.As(err, &pe):
		httpx.Error(c, http.StatusBadRequest, pe.Error())
	case errors.Is(err, app.ErrNoPriceThen):
		httpx.Error(c, http.StatusBadRequest, err.Error())
	case errors.Is(err, app.ErrNotFound):
		httpx.Error(c, http.StatusNotFound, err.Error())
	case errors.Is(err, app.ErrNotConfigured):
		httpx.Error(c, http.StatusNotFound, "this deployment has no native token configured")
	case errors.Is(err, app.ErrImporting):
		c.Header("Retry-After", strconv.Itoa(ImportingRetryAfter))
		httpx.Error(c, http.StatusServiceUnavailable, err.Error()+"; retry later")
	case errors.Is(err, app.ErrUnavailable):
		httpx.Error(c, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, context.Canceled):
		httpx.Error(c, http.StatusServiceUnavailable, "request canceled")
	default:
		httpx.Fail(c, err)
	}
}

// tokenRef reads the token of a /:id or /:id/:address route: a pricing id, or a chain (in :id)
// and a contract address.
func (h *handlers) tokenRef(c *gin.Context) (app.TokenRef, error) {
	id, addr := c.Param("id"), c.Param("address")
	if addr == "" {
		return app.TokenRef{PricingID: id}, PricingID(id)
	}
	if !h.set.Has(id) {
		if _, known := chains.Lookup(id); known {
			return app.TokenRef{}, params.Errorf("chain", "chain %q is not configured on this deployment", id)
		}
		return app.TokenRef{}, params.Errorf("chain", "unknown chain %q", id)
	}
	norm, err := address.NormalizeForChain(id, addr)
	if err != nil {
		return app.TokenRef{}, fmt.Errorf("token %s/%s: address is not valid on %s: %w", id, params.Trunc(addr), id, app.ErrNotFound)
	}
	return app.TokenRef{Chain: id, Address: norm}, nil
}

func (h *handlers) top(c *gin.Context) {
	q, err := ParseTop(c.Request.URL.Query(), h.set)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.Top(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) topFlow(c *gin.Context) {
	ref, err := h.tokenRef(c)
	if err != nil {
		fail(c, err)
		return
	}
	q, err := ParseTopFlow(c.Request.URL.Query(), h.set)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.TopFlows(c.Request.Context(), ref, q.Chains, q.Window, q.Limit)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) volume(c *gin.Context) {
	ref, err := h.tokenRef(c)
	if err != nil {
		fail(c, err)
		return
	}
	q, err := ParseVolume(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.Volume(c.Request.Context(), ref, q.Granularity, q.Window)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) trending(c *gin.Context) {
	res, err := h.svc.Trending(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) trendingOne(c *gin.Context) {
	id := c.Param("id")
	if err := PricingID(id); err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.TrendingToken(c.Request.Context(), id)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) altcoinIndex(c *gin.Context) {
	n, err := h.svc.AltcoinIndex(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, gin.H{"altcoinIndex": n})
}

func (h *handlers) circulating(c *gin.Context) {
	n, err := h.svc.Circulating(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, gin.H{"amount": n})
}

// networkHistory answers the daily quotes of the chain's native coin. token-analytics owns it
// because it holds the prices (docs/architecture.md).
func (h *handlers) networkHistory(c *gin.Context) {
	cs, err := h.set.Resolve([]string{c.Param("chain")})
	if err != nil || len(cs) != 1 {
		fail(c, params.Errorf("chain", "%v", err))
		return
	}
	qs, err := h.svc.NetworkHistory(c.Request.Context(), cs[0].NativePricingID)
	if err != nil {
		fail(c, err)
		return
	}
	if qs == nil {
		qs = []app.Quote{}
	}
	httpx.Answer(c, http.StatusOK, qs)
}

// networkStatus answers the status of every chain of the deployment that has a block. It is
// here, beside the native coins' quotes, because token-analytics keeps its own per-block figures
// and transfer rollups (docs/architecture.md "Networks").
func (h *handlers) networkStatus(c *gin.Context) {
	st, err := h.svc.NetworkStatus(c.Request.Context(), h.set.Chains())
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, st)
}

func (h *handlers) exchangeTokens(c *gin.Context) {
	res, err := h.svc.ExchangeTokens(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) market(c *gin.Context) {
	ref, err := h.tokenRef(c)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.Market(c.Request.Context(), ref)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}
