// Package http is the intelligence service's HTTP layer: its public routes (reached through the
// edge at the same paths) and its /internal API for other services (which the edge never routes).
package http

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/gin-gonic/gin"
)

// Register adds the service's routes to e.
func Register(e *gin.Engine, a *app.Service) {
	h := handlers{a: a}
	e.GET("/intelligence/address/:address", h.address)
	e.GET("/intelligence/address/:address/all", h.addressAll)
	for _, p := range []string{"/intelligence/address_enriched", "/intelligence/address_with_extra_enrichment"} {
		e.GET(p+"/:address", h.enriched)
		e.GET(p+"/:address/all", h.enrichedAll)
	}
	e.POST("/intelligence/address/batch", h.batch)
	e.GET("/intelligence/entity/:entity", h.entity)
	e.GET("/intelligence/entity/:entity/summary", h.summary)
	e.GET("/intelligence/entity_predictions/:entity", h.predictions)
	e.GET("/intelligence/contract/:chain/:address", h.contract)
	// gin needs one wildcard name per position: :id is the pricing id, or the chain when an
	// address follows.
	e.GET("/intelligence/token/:id", h.tokenByID)
	e.GET("/intelligence/token/:id/:address", h.tokenByAddress)
	e.GET("/tag/:id/params", h.tagParams)
	e.GET("/tag/:id/summary", h.tagSummary)
	e.GET("/intelligence/search", h.search)
	e.GET("/intelligence/entity_types", h.entityTypes)
	e.POST("/intelligence/address/batch/all", h.batchAll)
	e.POST("/intelligence/address_enriched/batch", h.enrichedBatch)
	e.POST("/intelligence/address_enriched/batch/all", h.enrichedBatchAll)
	e.GET("/cluster/:id/summary", h.clusterSummary)
	for _, kind := range []string{"entities", "addresses", "tags", "address_tags"} {
		e.GET("/intelligence/"+kind+"/updates", h.updates(kind))
	}
	registerRisk(e, h)
	e.POST("/internal/tags", h.tagIDs)
	e.POST("/internal/entities", h.entitiesKnown)
	// The batch paths are POST only, but a GET address route would take "batch" for an address
	// (a 404 on its format): every other method on them is a 405 naming POST (API.md).
	for _, p := range []string{"/intelligence/address/batch", "/intelligence/address/batch/all",
		"/intelligence/address_enriched/batch", "/intelligence/address_enriched/batch/all"} {
		onlyMethod(e, p, http.MethodPost)
	}
}

// onlyMethod answers every method but allowed on path with a 405 whose Allow header names
// allowed. It registers the refusal under each other method, so gin's own 405 (which lists
// every method with a handler) never answers the path.
func onlyMethod(e *gin.Engine, path, allowed string) {
	refuse := func(c *gin.Context) {
		c.Header("Allow", allowed)
		httpx.Error(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" not allowed on "+c.Request.URL.Path)
	}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions} {
		if m != allowed {
			e.Handle(m, path, refuse)
		}
	}
}

type handlers struct{ a *app.Service }

func (h handlers) address(c *gin.Context) {
	chain, err := params.One(c.Request.URL.Query(), "chain")
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	t, err := app.ParseTarget(h.a.Chains, c.Param("address"), chain)
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.Address(c.Request.Context(), t)
	answer(c, v, err)
}

// targetsAll reads the address of an /all route on every configured chain where its format is
// valid, among chains and chain when given (chainFilter, as /batch/all reads them).
func (h handlers) targetsAll(c *gin.Context) ([]app.Target, error) {
	only, err := h.chainFilter(c)
	if err != nil {
		return nil, err
	}
	return app.ParseTargetsAll(h.a.Chains, c.Param("address"), only)
}

func (h handlers) addressAll(c *gin.Context) {
	ts, err := h.targetsAll(c)
	if err != nil {
		fail(c, err)
		return
	}
	m, err := h.a.AddressAll(c.Request.Context(), ts)
	answer(c, m, err)
}

func enrichOptions(c *gin.Context) (app.EnrichOptions, error) {
	q := c.Request.URL.Query()
	var o app.EnrichOptions
	var err error
	if o.Tags, err = params.Bool(q, "includeTags", true); err != nil {
		return o, httpx.BadRequest("%v", err)
	}
	if o.Clusters, err = params.Bool(q, "includeClusters", true); err != nil {
		return o, httpx.BadRequest("%v", err)
	}
	if o.Predictions, err = params.Bool(q, "includeEntityPredictions", true); err != nil {
		return o, httpx.BadRequest("%v", err)
	}
	return o, nil
}

func (h handlers) enriched(c *gin.Context) {
	o, err := enrichOptions(c)
	if err != nil {
		fail(c, err)
		return
	}
	chain, err := params.One(c.Request.URL.Query(), "chain")
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	t, err := app.ParseTarget(h.a.Chains, c.Param("address"), chain)
	if err != nil {
		fail(c, err)
		return
	}
	m, err := h.a.Enriched(c.Request.Context(), []app.Target{t}, o)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, m[t.Chain])
}

func (h handlers) enrichedAll(c *gin.Context) {
	o, err := enrichOptions(c)
	if err != nil {
		fail(c, err)
		return
	}
	ts, err := h.targetsAll(c)
	if err != nil {
		fail(c, err)
		return
	}
	m, err := h.a.Enriched(c.Request.Context(), ts, o)
	answer(c, m, err)
}

type batchRequest struct {
	Addresses []string `json:"addresses"`
}

// batch answers POST /intelligence/address/batch: each address on chain when given, else on the
// chain detected from its format, among the chains named by chains when given.
func (h handlers) batch(c *gin.Context) {
	only, chain, err := h.batchChain(c)
	if err != nil {
		fail(c, err)
		return
	}
	var req batchRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	m, err := h.a.Batch(c.Request.Context(), req.Addresses, chain, only)
	answerBatch(c, m, err)
}

func (h handlers) entity(c *gin.Context) {
	v, err := h.a.Entity(c.Request.Context(), c.Param("entity"))
	answer(c, v, err)
}

func (h handlers) summary(c *gin.Context) {
	v, err := h.a.EntitySummary(c.Request.Context(), c.Param("entity"))
	answer(c, v, err)
}

func (h handlers) predictions(c *gin.Context) {
	v, err := h.a.EntityPredictions(c.Request.Context(), c.Param("entity"))
	answer(c, v, err)
}

func (h handlers) contract(c *gin.Context) {
	t, err := app.ParseChainAddress(h.a.Chains, c.Param("chain"), c.Param("address"))
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.Contract(c.Request.Context(), t)
	answer(c, v, err)
}

func (h handlers) tokenByID(c *gin.Context) {
	v, err := h.a.TokenByID(c.Request.Context(), c.Param("id"))
	answer(c, v, err)
}

func (h handlers) tokenByAddress(c *gin.Context) {
	t, err := app.ParseChainAddress(h.a.Chains, c.Param("id"), c.Param("address"))
	if err != nil {
		fail(c, err)
		return
	}
	v, err := h.a.TokenByAddress(c.Request.Context(), t)
	answer(c, v, err)
}

func (h handlers) tagParams(c *gin.Context) {
	q := c.Request.URL.Query()
	limit, err := params.Int(q, "limit", 100, 1, 1000)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	offset, err := params.Int(q, "offset", 0, 0, 1<<30)
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return
	}
	v, err := h.a.TagParams(c.Request.Context(), c.Param("id"), limit, offset)
	if err != nil {
		fail(c, err)
		return
	}
	c.Header(httpx.HeaderRows, strconv.Itoa(len(v)))
	c.JSON(http.StatusOK, v)
}

func (h handlers) tagSummary(c *gin.Context) {
	v, err := h.a.TagSummary(c.Request.Context(), c.Param("id"))
	answer(c, v, err)
}

// fail answers err: the app's domain errors become their statuses here (invalid input 400, not
// found 404, no caller 401), and everything else is answered as every service does (httpx.Fail:
// a dependency outage is a 503 naming it).
func fail(c *gin.Context, err error) {
	var inv *app.InvalidInputError
	var nf *app.NotFoundError
	switch {
	case errors.As(err, &inv):
		err = &httpx.StatusError{Status: http.StatusBadRequest, Message: inv.Error()}
	case errors.As(err, &nf):
		err = &httpx.StatusError{Status: http.StatusNotFound, Message: nf.Error()}
	case errors.Is(err, app.ErrUnauthenticated):
		err = &httpx.StatusError{Status: http.StatusUnauthorized, Message: app.ErrUnauthenticated.Error()}
	}
	httpx.Fail(c, err)
}

// answer writes v as a 200, or the error's status when err is set.
func answer[T any](c *gin.Context, v T, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}
