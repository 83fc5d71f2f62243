// Package http is the token-analytics service's HTTP layer: its public routes (reached through the edge)
// and its /internal API.
package http

import (
	"net/http"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/gin-gonic/gin"
)

// pending are the public routes this service owns that are not built yet; they answer 501.
var pending = [][2]string{
	{"GET", "/token/trending"},
	{"GET", "/token/trending/:id"},
	{"GET", "/token/top"},
	{"GET", "/token/top_flow/:id"},
	{"GET", "/token/top_flow/:id/:address"},
	{"GET", "/token/volume/:id"},
	{"GET", "/token/volume/:id/:address"},
	{"GET", "/marketdata/altcoin_index"},
	{"GET", "/native/circulating"},
}

// Register adds the service's routes to e.
func Register(e *gin.Engine) {
	for _, r := range pending {
		e.Handle(r[0], r[1], func(c *gin.Context) { httpx.Error(c, http.StatusNotImplemented, "not implemented yet") })
	}
}
