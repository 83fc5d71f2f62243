package ws

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/coder/websocket"
)

// Refusal is an upgrade refused before it happened, with the status and message to answer.
type Refusal struct {
	Status  int
	Message string
	// RetryAfter, when above 0, is how long the caller had better wait before trying again
	// (the answer's Retry-After).
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.Message }

// Connect is how a connection starts: empty (subscribe messages follow), or bound to an
// existing session (REST sessions, v2 streams) with Fresh dropping what it was owed.
type Connect struct {
	SessionID string
	Fresh     bool
	V2        bool // a v2 stream: SessionID is its streamId
}

// slowReason closes a connection whose send queue overflowed; slowWriteReason one a write to
// which blocked past the write timeout. Both tell the client to reconnect with its session,
// which keeps what it was owed.
const (
	slowReason      = "send queue overflow: the client reads too slowly; reconnect with your sessionId"
	slowWriteReason = "write timed out: the client reads too slowly; reconnect with your sessionId"
)

// writeFailedReason is the close reason of a connection whose writer failed with err.
func writeFailedReason(err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return slowWriteReason
	}
	return "write failed"
}

// connLimitRetry is the Retry-After of a connect refused at the key's connection limit: a slot
// frees as soon as one of the key's connections ends, which nothing here can foresee, so the
// caller is told to wait a little rather than the worst case (connTTL, a dead replica's count).
const connLimitRetry = 5 * time.Second

// connTTL is how long a connection counts towards its key's limit without a heartbeat (a
// replica that died leaves its connections counted this long).
const connTTL = 90 * time.Second

// Serve upgrades the request and serves the connection until it ends. Refusals (a key just
// invalidated, credits spent, the key's connection limit, an unknown session, shutdown) are
// returned before any upgrade, for the caller to answer as HTTP errors.
func (h *Hub) Serve(w http.ResponseWriter, r *http.Request, id Identity, cn Connect) error {
	hash := KeyHash(r.Context())
	if hash == "" {
		return ErrNoKey
	}
	token := newID()
	release, admitted, err := h.admit(r.Context(), id, hash, token, cn)
	if err != nil {
		return err
	}
	// Callers authenticate with their API key, not cookies, so a cross-origin page gains
	// nothing a script with the key would not have: the Origin check is off.
	cw := &corkWriter{ResponseWriter: w, timeout: h.o.WriteTimeout, sendBuffer: h.o.SendBuffer}
	aw := &acceptErrors{corkWriter: cw}
	wsc, err := websocket.Accept(aw, r, &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		release()
		if aw.status != 0 { // a bad handshake: answered as every error of the API, in JSON
			return &Refusal{Status: aw.status, Message: strings.TrimSpace(aw.text.String())}
		}
		return nil // Accept answered the client
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	c := &conn{h: h, ws: wsc, cc: cw.cc, id: id, token: token, q: newQueue(queueSize{h.o.QueueSize, h.o.QueuePerFilter, h.o.QueueMax}), ctx: ctx, cancel: cancel,
		admitted: admitted, ended: make(chan struct{})}
	c.q.onFull = func() {
		if !c.released.Load() && c.slowCounted.CompareAndSwap(false, true) { // a queue filling behind a connection already ending drops no client
			h.o.Metrics.slowDropped(slowQueueFull)
		}
		c.kick(slowReason)
	}
	c.q.clock = h.o.Now
	c.q.onDiscard = h.o.Metrics.quotaDiscarded
	c.v2, c.keyHash = cn.V2, hash
	c.start()
	if err := h.add(c); err != nil {
		if !c.stopWriter(time.Second) {
			// The writer is stuck on a client that does not read: cut the connection under it,
			// and let the quota go only once the writer no longer takes from it.
			_ = wsc.CloseNow()
			c.writers.Wait()
		}
		c.releaseQuota()
		cancel()
		release()
		_ = wsc.Close(websocket.StatusGoingAway, "server shutting down; connect again")
		return nil
	}
	if h.keyInvalidatedSince(hash, admitted) {
		// The invalidation arrived while the connection was being set up, after the hub's
		// connections were closed for it.
		c.close(CloseKeyChanged, keyChangedReason)
	}
	// The connection is served on a goroutine of its own, and the handler returns: the
	// request's deep middleware stack is not kept alive for each of thousands of idle
	// connections.
	go func() {
		defer h.remove(c)
		if cn.SessionID != "" {
			aside(func() { c.restore(cn) })
		}
		c.run()
	}()
	return nil
}

// admit decides whether the key may open a connection now (its key just changed, its credits,
// its connection limit, the session it names) and counts it; release stops counting it.
func (h *Hub) admit(ctx context.Context, id Identity, hash, token string, cn Connect) (release func(), admitted time.Time, err error) {
	if h.KeyJustChanged(hash) {
		return nil, admitted, ErrKeyChanged
	}
	if spent, err := h.CreditsSpent(ctx, id); err != nil {
		return nil, admitted, err
	} else if spent {
		return nil, admitted, &Refusal{Status: http.StatusTooManyRequests, Message: creditLimitReason, RetryAfter: h.CreditsRetryAfter()}
	}
	// admitted is the Redis server's time, the clock key invalidations are recorded by
	// (keyevents), so KeysMissed compares the two with no skew between machines.
	ok, admitted, err := h.o.Store.Connect(ctx, id.KeyID, token, h.o.MaxConnsPerKey, connTTL)
	if err != nil {
		return nil, admitted, err
	}
	if !ok {
		return nil, admitted, &Refusal{Status: http.StatusTooManyRequests, Message: "too many stream connections for this key (limit " + itoa(h.o.MaxConnsPerKey) + ")",
			RetryAfter: connLimitRetry}
	}
	release = func() { _ = h.o.Store.Disconnect(context.WithoutCancel(ctx), id.KeyID, token) }
	if cn.SessionID == "" {
		return release, admitted, nil
	}
	ss, err := h.o.Store.Get(ctx, cn.SessionID, id.KeyID)
	if err == nil && (ss.Kind == KindV2) != cn.V2 {
		err = store.ErrNoSession
	}
	if err == nil {
		return release, admitted, nil
	}
	release()
	if errors.Is(err, store.ErrNoSession) {
		name := "session_id"
		if cn.V2 {
			name = "stream_id"
		}
		return nil, admitted, &Refusal{Status: http.StatusNotFound, Message: name + ": no such session (it expired or was deleted)"}
	}
	return nil, admitted, err
}

// restore binds a connection made with a session to it, telling the client when it cannot.
func (c *conn) restore(cn Connect) {
	if err := c.resume(cn.SessionID, cn.Fresh, func() {}); err != nil && !errors.Is(err, errEnded) {
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			pe = perr(CodeInternal, "the session could not be restored; retry")
		}
		c.fail("", pe)
	}
}

// acceptErrors keeps the plain-text error websocket.Accept writes for a bad handshake (a request
// without Upgrade: websocket is a 426, a bad version or key a 400), for Serve to return as a
// Refusal; the headers Accept sets for it (Upgrade, Sec-WebSocket-Version) stay. The upgrade
// itself passes through.
type acceptErrors struct {
	*corkWriter
	status int
	text   strings.Builder
}

func (a *acceptErrors) WriteHeader(code int) {
	if code >= 400 {
		a.status = code
		a.Header().Del("Content-Type") // http.Error's text/plain; the Refusal's answer sets JSON
		return
	}
	a.corkWriter.WriteHeader(code)
}

func (a *acceptErrors) Write(b []byte) (int, error) {
	if a.status != 0 {
		return a.text.Write(b)
	}
	return a.corkWriter.Write(b)
}
