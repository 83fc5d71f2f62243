package http

import (
	"net/http"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/gin-gonic/gin"
)

// The price routes: a token's market data, price history, price change since a time and
// contract addresses, read from the registry and market.prices (docs/token-analytics.md,
// "Routes").

func (h *handlers) marketData(c *gin.Context) {
	id := c.Param("id")
	if err := PricingID(id); err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.MarketData(c.Request.Context(), id)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) priceHistory(c *gin.Context) {
	ref, err := h.tokenRef(c)
	if err != nil {
		fail(c, err)
		return
	}
	daily, err := ParseHistory(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.TokenPriceHistory(c.Request.Context(), ref, daily)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) priceChange(c *gin.Context) {
	id := c.Param("id")
	if err := PricingID(id); err != nil {
		fail(c, err)
		return
	}
	past, err := ParsePriceChange(c.Request.URL.Query(), h.svc.Now())
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.PriceChange(c.Request.Context(), id, past)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}

func (h *handlers) addresses(c *gin.Context) {
	id := c.Param("id")
	if err := PricingID(id); err != nil {
		fail(c, err)
		return
	}
	res, err := h.svc.Addresses(c.Request.Context(), id)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, res)
}
