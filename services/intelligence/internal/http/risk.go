package http

import (
	"net/http"
	"strconv"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/gin-gonic/gin"
)

// registerRisk adds the risk-score routes (docs/intelligence.md "Risk scores").
func registerRisk(e *gin.Engine, h handlers) {
	e.GET("/risk/address/:address", h.addressRisk)
	e.GET("/risk/address/:address/paths", h.addressRiskPaths)
	e.POST("/risk/address/batch", h.addressRiskBatch)
	e.GET("/risk/entity/:entity_id", h.entityRisk)
	e.POST("/risk/entity/batch", h.entityRiskBatch)
	// As the attribution batches: a GET of the batch path is no lookup of "batch".
	for _, p := range []string{"/risk/address/batch", "/risk/entity/batch"} {
		onlyMethod(e, p, http.MethodPost)
	}
}

func (h handlers) addressRisk(c *gin.Context) {
	v, err := h.a.AddressRisk(c.Request.Context(), c.Param("address"))
	answer(c, v, err)
}

func (h handlers) addressRiskPaths(c *gin.Context) {
	v, err := h.a.AddressRiskPaths(c.Request.Context(), c.Param("address"))
	answer(c, v, err)
}

// addressRiskBatch answers POST /risk/address/batch {"addresses": [...]}: a map keyed by the
// address as given (the public shape's, without an "addresses" wrapper), and the rows header,
// the distinct addresses scored (1 credit each at the edge).
func (h handlers) addressRiskBatch(c *gin.Context) {
	var req batchRequest
	if !httpx.BindJSON(c, &req) {
		return
	}
	m, err := h.a.AddressRiskBatch(c.Request.Context(), req.Addresses)
	if err != nil {
		fail(c, err)
		return
	}
	c.Header(httpx.HeaderRows, strconv.Itoa(len(m)))
	c.JSON(http.StatusOK, m)
}

func (h handlers) entityRisk(c *gin.Context) {
	v, err := h.a.EntityRisk(c.Request.Context(), c.Param("entity_id"))
	answer(c, v, err)
}

// entityRiskBatch answers POST /risk/entity/batch {"entity_ids": [...]}, keyed by the id as
// given, with the rows header the distinct entities scored.
func (h handlers) entityRiskBatch(c *gin.Context) {
	var req struct {
		EntityIDs []string `json:"entity_ids"`
	}
	if !httpx.BindJSON(c, &req) {
		return
	}
	m, err := h.a.EntityRiskBatch(c.Request.Context(), req.EntityIDs)
	if err != nil {
		fail(c, err)
		return
	}
	c.Header(httpx.HeaderRows, strconv.Itoa(len(m)))
	c.JSON(http.StatusOK, m)
}
