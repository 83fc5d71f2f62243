package http

import (
	"net/http"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/gin-gonic/gin"

	"github.com/chainintel/chainintel/services/transfers/internal/query"
)

func (h handlers) unenriched(c *gin.Context) {
	q, err := h.parser.Transfers(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.UnenrichedTransfers(c.Request.Context(), q)
	if err != nil {
		fail(c, err)
		return
	}
	rows(c, len(out.Transfers))
	httpx.Answer(c, http.StatusOK, out)
}

func (h handlers) transfersOfTx(c *gin.Context) {
	hash, err := query.TxHash(c.Param("hash"))
	if err != nil {
		fail(c, err)
		return
	}
	q, err := h.parser.TxTransfers(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	out, err := h.app.TransfersOfTx(c.Request.Context(), hash, q.Chain, q.Type)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h handlers) volume(sub subject) gin.HandlerFunc {
	return func(c *gin.Context) {
		s, err := sub(c)
		if err != nil {
			fail(c, err)
			return
		}
		q, err := h.parser.Volume(c.Request.URL.Query())
		if err == nil {
			err = h.parser.FitsChains("address", s, q.Chains)
		}
		if err != nil {
			fail(c, err)
			return
		}
		out, err := h.app.Volume(c.Request.Context(), s, q)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}
