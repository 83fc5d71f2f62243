// Package http is the transfers service's HTTP layer: its public routes (reached through the edge)
// and its /internal API. Handlers parse with internal/query, call internal/app and map errors to
// the one error shape.
package http

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/transfers/internal/app"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	ulclient "github.com/chainintel/chainintel/services/user-labels/client"
	"github.com/gin-gonic/gin"
)

// MaxActivityAddresses is how many addresses one /internal/activity call may name.
const MaxActivityAddresses = 1000

type handlers struct {
	app    *app.App
	parser query.Parser
}

// Register adds the service's routes to e.
func Register(e *gin.Engine, a *app.App, p query.Parser) {
	h := handlers{app: a, parser: p}
	e.GET("/transfers", h.transfers)
	e.GET("/transfers/histogram", h.histogram)
	e.GET("/transfers/histogram/simple", h.simpleHistogram)
	e.GET("/transfers/tx/:hash", h.transfersOfTx)
	e.GET("/transfers/unenriched", h.unenriched)
	e.GET("/volume/address/:address", h.volume(addressSubject))
	e.GET("/volume/entity/:entity", h.volume(entitySubject))
	e.GET("/swaps", h.swaps)
	e.GET("/tx/:hash", h.tx)
	e.GET("/counterparties/address/:address", h.counterparties(addressSubject))
	e.GET("/counterparties/entity/:entity", h.counterparties(entitySubject))
	e.GET("/flow/address/:address", h.flow(addressSubject))
	e.GET("/flow/entity/:entity", h.flow(entitySubject))
	e.POST("/internal/activity", h.activity)
}

// fail maps an error: a bad parameter or an invalid input of the app is a 400 naming it, what the
// app does not know and an address whose format fits none of the requested chains a 404; everything else as every service does (httpx.Fail: a dependency
// outage, PostgreSQL or user-labels, is a 503 naming it).
func fail(c *gin.Context, err error) {
	var pe *params.Error
	var ac *query.AddressChainError
	var inv *app.InvalidInputError
	var nf *app.NotFoundError
	switch {
	case errors.As(err, &ac):
		httpx.Error(c, http.StatusNotFound, ac.Error())
		return
	case errors.As(err, &pe):
		httpx.Error(c, http.StatusBadRequest, pe.Error())
		return
	case errors.As(err, &inv):
		err = &httpx.StatusError{Status: http.StatusBadRequest, Message: inv.Error()}
	case errors.As(err, &nf):
		err = &httpx.StatusError{Status: http.StatusNotFound, Message: nf.Error()}
	}
	httpx.Fail(c, err)
}

func rows(c *gin.Context, n int) { c.Header(httpx.HeaderRows, strconv.Itoa(n)) }

func (h handlers) transfers(c *gin.Context) {
	q, err := h.parser.Transfers(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.Transfers(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	rows(c, len(out.Transfers))
	httpx.Answer(c, http.StatusOK, out)
}

func (h handlers) histogram(c *gin.Context) {
	q, err := h.parser.Histogram(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.Histogram(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, out)
}

func (h handlers) simpleHistogram(c *gin.Context) {
	q, err := h.parser.SimpleHistogram(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.Histogram(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	httpx.Answer(c, http.StatusOK, out)
}

func (h handlers) swaps(c *gin.Context) {
	q, err := h.parser.Swaps(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.Swaps(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	rows(c, len(out.Swaps))
	httpx.Answer(c, http.StatusOK, out)
}

func (h handlers) tx(c *gin.Context) {
	hash, err := query.TxHash(c.Param("hash"))
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.Transaction(c.Request.Context(), hash)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// subject reads a route's address or entity path segment; an unknown format is a 404.
type subject func(c *gin.Context) (query.Ref, error)

func addressSubject(c *gin.Context) (query.Ref, error) {
	v := c.Param("address")
	r, ok := query.PathAddress(v)
	if !ok {
		return r, httpx.NotFound("%q is not an address of any supported chain", v)
	}
	return r, nil
}

func entitySubject(c *gin.Context) (query.Ref, error) {
	v := c.Param("entity")
	r, ok := query.PathEntity(v)
	if !ok {
		return r, httpx.NotFound("unknown entity %q", v)
	}
	return r, nil
}

func (h handlers) counterparties(sub subject) gin.HandlerFunc {
	return func(c *gin.Context) {
		s, err := sub(c)
		if err != nil {
			fail(c, err)
			return
		}
		q, err := h.parser.Counterparties(c.Request.URL.Query())
		if err == nil {
			err = h.parser.FitsChains("address", s, q.Chains)
		}
		if err != nil {
			fail(c, err)
			return
		}
		out, err := h.app.Counterparties(c.Request.Context(), s, q)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (h handlers) flow(sub subject) gin.HandlerFunc {
	return func(c *gin.Context) {
		s, err := sub(c)
		if err != nil {
			fail(c, err)
			return
		}
		q, err := h.parser.Flow(c.Request.URL.Query())
		if err == nil {
			err = h.parser.FitsChains("address", s, q.Chains)
		}
		if err != nil {
			fail(c, err)
			return
		}
		out, err := h.app.Flow(c.Request.Context(), s, q)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

func (h handlers) activity(c *gin.Context) {
	var body struct {
		Addresses []ulclient.AddressRef `json:"addresses"`
	}
	if !httpx.BindJSON(c, &body) {
		return
	}
	if len(body.Addresses) > MaxActivityAddresses {
		httpx.Errorf(c, http.StatusBadRequest, "addresses: at most %d, got %d", MaxActivityAddresses, len(body.Addresses))
		return
	}
	out, err := h.app.Activity(c.Request.Context(), body.Addresses)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
