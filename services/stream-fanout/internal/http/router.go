// Package http is the stream-fanout service's HTTP layer: the WebSocket routes and the REST
// routes of sessions and v2 streams, reached through the edge, which authenticates the key and
// signs the caller's identity onto the proxied request.
package http

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/ws"
	"github.com/gin-gonic/gin"
)

// Register adds the service's routes to e.
func Register(e *gin.Engine, h *ws.Hub) {
	a := api{h: h}
	g := e.Group("/", httpx.RequireIdentity(), requireKey, a.keyGate)
	g.GET("/ws/transfers", a.transfers)
	g.POST("/ws/sessions", a.createSession)
	g.GET("/ws/sessions", a.sessions)
	g.GET("/ws/sessions/:id", a.session)
	g.DELETE("/ws/sessions/:id", a.deleteSession)
	g.GET("/ws/session-info", a.sessionInfo)
	g.GET("/ws/active_connections", a.activeConnections)
	g.POST("/ws/v2/streams", a.createStream)
	g.GET("/ws/v2/streams", a.streams)
	g.DELETE("/ws/v2/streams/:id", a.deleteStream)
	g.GET("/ws/v2/transfers", a.v2transfers)
}

type api struct{ h *ws.Hub }

// requireKey refuses a call whose signature covers no caller key hash: the edge signs one onto
// every stream call, and a call without it would open a stream no revocation can close (the
// keyless signatures the edge makes for every other service would otherwise do here too).
func requireKey(c *gin.Context) {
	if ws.KeyHash(c.Request.Context()) == "" {
		httpx.Error(c, ws.ErrNoKey.Status, ws.ErrNoKey.Message)
		c.Abort()
		return
	}
	c.Next()
}

// keyGate refuses the calls of a key invalidated (revoked, or its tier changed) within the
// last moments, which an edge may still have let through on its cached verification.
func (a api) keyGate(c *gin.Context) {
	if a.h.KeyJustChanged(ws.KeyHash(c.Request.Context())) {
		c.Header("Retry-After", "1")
		httpx.Error(c, ws.ErrKeyChanged.Status, ws.ErrKeyChanged.Message)
		c.Abort()
		return
	}
	c.Next()
}

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
		if ref.RetryAfter > 0 {
			retryAfter(c, ref.RetryAfter)
		} else if ref.Status == http.StatusServiceUnavailable {
			c.Header("Retry-After", "1")
		}
		httpx.Error(c, ref.Status, ref.Message)
	default:
		httpx.Error(c, http.StatusServiceUnavailable, "the stream is unavailable; retry later")
	}
	c.Abort()
}

// retryAfter sets the answer's Retry-After to d in whole seconds, rounded up (at least 1).
func retryAfter(c *gin.Context, d time.Duration) {
	c.Header("Retry-After", strconv.FormatInt(int64(max((d+time.Second-1)/time.Second, 1)), 10))
}

func identity(c *gin.Context) httpx.Identity {
	id, _ := httpx.IdentityFrom(c.Request.Context())
	return id
}

// failed answers a refusal (the caller's credits spent, the key's session cap) or an unexpected
// error; details of the latter stay in the log.
func (a api) failed(c *gin.Context, err error) {
	if errors.Is(err, ws.ErrCreditLimit) {
		retryAfter(c, a.h.CreditsRetryAfter())
		httpx.Error(c, http.StatusTooManyRequests, err.Error())
		return
	}
	var sl *ws.SessionLimitError
	if errors.As(err, &sl) {
		retryAfter(c, sl.RetryAfter)
		httpx.Error(c, http.StatusTooManyRequests, sl.Error())
		return
	}
	_ = c.Error(err)
	httpx.Error(c, http.StatusServiceUnavailable, "the stream's session store is unavailable; retry later")
}

func (a api) createSession(c *gin.Context) {
	v, err := a.h.CreateSession(c.Request.Context(), identity(c))
	if err != nil {
		a.failed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (a api) sessions(c *gin.Context) {
	v, err := a.h.Sessions(c.Request.Context(), identity(c))
	if err != nil {
		a.failed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func sessionID(c *gin.Context) (string, bool) {
	id := c.Param("id")
	if id == "" || len(id) > 64 {
		httpx.Error(c, http.StatusBadRequest, "id: must be a session id of 1 to 64 characters")
		return "", false
	}
	return id, true
}

func (a api) session(c *gin.Context) {
	id, ok := sessionID(c)
	if !ok {
		return
	}
	v, err := a.h.Session(c.Request.Context(), identity(c), id)
	if errors.Is(err, store.ErrNoSession) {
		httpx.Error(c, http.StatusNotFound, "no such session")
		return
	}
	if err != nil {
		a.failed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (a api) del(c *gin.Context, v2 bool, what string) {
	id, ok := sessionID(c)
	if !ok {
		return
	}
	found, err := a.h.DeleteSession(c.Request.Context(), identity(c), id, v2)
	if err != nil {
		a.failed(c, err)
		return
	}
	if !found {
		httpx.Error(c, http.StatusNotFound, "no such "+what)
		return
	}
	c.JSON(http.StatusOK, gin.H{"message": what + " deleted"})
}

func (a api) deleteSession(c *gin.Context) { a.del(c, false, "session") }
func (a api) deleteStream(c *gin.Context)  { a.del(c, true, "stream") }

func (a api) sessionInfo(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"creditPerTransfer": 1, "creditPerSession": 0, "nextRenewalDate": a.h.NextRenewal(identity(c))})
}

func (a api) activeConnections(c *gin.Context) {
	n, err := a.h.ActiveConnections(c.Request.Context(), identity(c))
	if err != nil {
		a.failed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"activeConnections": n})
}

// maxBody bounds a v2 stream's filter body.
const maxBody = 64 << 10

func (a api) createStream(c *gin.Context) {
	b, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxBody))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			httpx.Error(c, http.StatusRequestEntityTooLarge, "body: larger than 64 KiB")
			return
		}
		httpx.Error(c, http.StatusBadRequest, "body: could not be read")
		return
	}
	raw, err := filter.Decode(b)
	if err != nil {
		httpx.Error(c, http.StatusBadRequest, err.Error())
		return
	}
	v, err := a.h.CreateStream(c.Request.Context(), identity(c), raw)
	var fe *filter.Error
	if errors.As(err, &fe) {
		httpx.Error(c, http.StatusBadRequest, fe.Error())
		return
	}
	if errors.Is(err, ws.ErrNamesLoading) {
		c.Header("Retry-After", "1")
		httpx.Error(c, http.StatusServiceUnavailable, err.Error())
		return
	}
	if errors.Is(err, ws.ErrLabelsUnavailable) {
		_ = c.Error(err)
		c.Header("Retry-After", "1")
		httpx.Error(c, http.StatusServiceUnavailable, ws.ErrLabelsUnavailable.Error())
		return
	}
	if err != nil {
		a.failed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (a api) streams(c *gin.Context) {
	v, err := a.h.Streams(c.Request.Context(), identity(c))
	if err != nil {
		a.failed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// v2transfers upgrades to a v2 stream: deliveries start without any message, and a reconnect
// within the v2 window replays what matched while away.
func (a api) v2transfers(c *gin.Context) {
	id := c.Query("stream_id")
	if id == "" || len(id) > 64 {
		httpx.Error(c, http.StatusBadRequest, "stream_id: required, the streamId from POST /ws/v2/streams")
		return
	}
	a.serve(c, identity(c), ws.Connect{SessionID: id, V2: true})
}
