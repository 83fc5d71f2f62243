// Package http is the stream-fanout service's HTTP layer: the WebSocket routes and the REST
// routes of sessions and v2 streams, reached through the edge, which authenticates the key and
// signs the caller's identity onto the proxied request.
package http

import (
	"errors"
	"net/http"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
	"github.com/gin-gonic/gin"
)

// Register adds the service's routes to e.
func Register(e *gin.Engine, h *ws.Hub) {
	a := api{h: h}
	g := e.Group("/", httpx.RequireIdentity())
	g.GET("/ws/transfers", a.transfers)
}

type api struct{ h *ws.Hub }

// transfers upgrades to the v1 stream; ?session_id= binds the connection to a session made
// over REST (fresh=true drops what it was owed).
func (a api) transfers(c *gin.Context) {
	id, _ := httpx.IdentityFrom(c.Request.Context())
	cn := ws.Connect{SessionID: c.Query("session_id")}
	switch c.Query("fresh") {
	case "", "false":
	case "true":
		cn.Fresh = true
	default:
		httpx.Error(c, http.StatusBadRequest, "fresh: must be true or false")
		return
	}
	if len(cn.SessionID) > 64 {
		httpx.Error(c, http.StatusBadRequest, "session_id: longer than 64 characters")
		return
	}
	a.serve(c, id, cn)
}

func (a api) serve(c *gin.Context, id httpx.Identity, cn ws.Connect) {
	err := a.h.Serve(c.Writer, c.Request, id, cn)
	var ref *ws.Refusal
	switch {
	case err == nil:
	case errors.As(err, &ref):
		httpx.Error(c, ref.Status, ref.Message)
	default:
		httpx.Error(c, http.StatusServiceUnavailable, "the stream is unavailable; retry later")
	}
	c.Abort()
}
