package http

import (
	"net/http"
	"strconv"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/intelligence/internal/app"
	"github.com/gin-gonic/gin"
)

// batchChains reads a batch route's chains list (params.Chains, as every route taking chains)
// and its lone chain; an unknown or unconfigured name in either is a 400 naming its parameter.
func (h handlers) batchChains(c *gin.Context) (only map[string]bool, chain string, err error) {
	q := c.Request.URL.Query()
	cs, err := params.Chains(q, "chains", h.a.Chains)
	if err != nil {
		return nil, "", httpx.BadRequest("%v", err)
	}
	if chain, err = params.One(q, "chain"); err != nil {
		return nil, "", httpx.BadRequest("%v", err)
	}
	if chain != "" {
		if _, err := h.a.Chains.Resolve([]string{chain}); err != nil {
			return nil, "", httpx.BadRequest("chain: %v", err)
		}
	}
	if len(cs) > 0 {
		only = make(map[string]bool, len(cs))
		for _, ch := range cs {
			only[ch.Name] = true
		}
	}
	return only, chain, nil
}

// batchChain is the chains of a batch answering each address on one chain: chain, else the
// detected chain among chains; both given must agree (chain among chains), neither silently
// winning, or it is a 400 naming chain.
func (h handlers) batchChain(c *gin.Context) (only map[string]bool, chain string, err error) {
	only, chain, err = h.batchChains(c)
	if err == nil && chain != "" && only != nil && !only[chain] {
		err = httpx.BadRequest("chain: %q is not among chains (%s)", chain, c.Query("chains"))
	}
	return only, chain, err
}

// chainFilter is the chains of a /batch/all route: the chains list and the lone chain together.
func (h handlers) chainFilter(c *gin.Context) (map[string]bool, error) {
	only, chain, err := h.batchChains(c)
	if err != nil || chain == "" {
		return only, err
	}
	if only == nil {
		only = map[string]bool{}
	}
	only[chain] = true
	return only, nil
}

func (h handlers) batchAll(c *gin.Context) { h.batchAllWith(c, false) }

func (h handlers) enrichedBatchAll(c *gin.Context) { h.batchAllWith(c, true) }

func (h handlers) batchAllWith(c *gin.Context, enriched bool) {
	var o *app.EnrichOptions
	if enriched {
		eo, err := enrichOptions(c)
		if err != nil {
			fail(c, err)
			return
		}
		o = &eo
	}
	only, err := h.chainFilter(c)
	if err != nil {
		fail(c, err)
		return
	}
	var req batchRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	m, err := h.a.BatchAll(c.Request.Context(), req.Addresses, only, o)
	answerBatch(c, m, err)
}

func (h handlers) enrichedBatch(c *gin.Context) {
	o, err := enrichOptions(c)
	if err != nil {
		fail(c, err)
		return
	}
	only, chain, err := h.batchChain(c)
	if err != nil {
		fail(c, err)
		return
	}
	var req batchRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	m, err := h.a.EnrichedBatch(c.Request.Context(), req.Addresses, chain, only, o)
	answerBatch(c, m, err)
}

// tagIDs answers POST /internal/tags?chain=: the tag ids of each address (services/intelligence/client).
func (h handlers) tagIDs(c *gin.Context) {
	chain, req, ok := chainBatch(c)
	if !ok {
		return
	}
	m, err := h.a.TagIDs(c.Request.Context(), req.Addresses, chain)
	answer(c, gin.H{"addresses": m}, err)
}

// entitiesKnown answers POST /internal/entities {"ids": [...]}: the ids intelligence holds and
// every entity type (services/intelligence/client).
func (h handlers) entitiesKnown(c *gin.Context) {
	var req struct {
		IDs []string `json:"ids"`
	}
	if !httpx.BindJSON(c, &req) {
		return
	}
	v, err := h.a.EntitiesKnown(c.Request.Context(), req.IDs)
	answer(c, v, err)
}

// chainBatch reads a one-chain batch route's chain parameter and body; when either is bad it
// has already answered (400, or 413 over the body limit) and returns false.
func chainBatch(c *gin.Context) (string, batchRequest, bool) {
	var req batchRequest
	chain, err := params.One(c.Request.URL.Query(), "chain")
	if err != nil {
		httpx.Fail(c, httpx.BadRequest("%v", err))
		return "", req, false
	}
	return chain, req, httpx.BindJSON(c, &req)
}

// answerBatch answers a batch route: the addresses keyed as given, and the rows header, the
// addresses answered (each distinct address once, as API.md prices a batch per address: a
// batch naming one address a thousand times answers, and costs, one).
func answerBatch[V any](c *gin.Context, m map[string]V, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.Header(httpx.HeaderRows, strconv.Itoa(len(m)))
	c.JSON(http.StatusOK, gin.H{"addresses": m})
}

func (h handlers) entityTypes(c *gin.Context) {
	v, err := h.a.EntityTypes(c.Request.Context())
	answer(c, v, err)
}

func (h handlers) clusterSummary(c *gin.Context) {
	v, err := h.a.ClusterSummary(c.Request.Context(), c.Param("id"))
	answer(c, v, err)
}
