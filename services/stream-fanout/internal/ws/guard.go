package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/coder/websocket"
	"golang.org/x/time/rate"
)

// What a hostile caller could otherwise take from the shared Redis and the services a
// subscribe asks (user-labels, token-analytics): the sessions its subscribes create (capped
// with the REST sessions and v2 streams, MaxSessionsPerKey), the bytes each session's filters
// are stored in (MaxSessionFilterBytes), and the client messages each connection has handled
// (MessageRate, MessageBurst).

// Defaults of the guard's options.
const (
	defaultMaxSessionFilterBytes = 64 << 10
	defaultMessageRate           = 10
	defaultMessageBurst          = 50
)

// guardDefaults fills the guard's options left zero.
func (o *Options) guardDefaults() {
	if o.MaxSessionFilterBytes <= 0 {
		o.MaxSessionFilterBytes = defaultMaxSessionFilterBytes
	}
	if o.MessageRate <= 0 {
		o.MessageRate = defaultMessageRate
	}
	if o.MessageBurst <= 0 {
		o.MessageBurst = defaultMessageBurst
	}
}

// msgGuard limits one connection's client messages (reader only: messages are handled one at
// a time, in order).
type msgGuard struct {
	lim *rate.Limiter // made at the first message
	// refused counts the messages refused in a row; closed is set once the connection was
	// closed for them.
	refused int
	closed  bool
}

// rateLimitedReason closes a connection that kept sending over its message limit.
const rateLimitedReason = "too many messages: the client kept sending over its limit; reconnect with your sessionId"

// admitMessage takes b within the connection's message limit (MessageRate a second, a burst of
// MessageBurst). One over it is not handled: it is answered RATE_LIMITED, and the one that makes
// MessageBurst refused in a row closes the connection with 1008 instead (its session waits for
// a reconnect as at any disconnect). A message within the limit starts the count again.
func (c *conn) admitMessage(b []byte) bool {
	g := &c.guard
	if g.closed {
		return false
	}
	if g.lim == nil {
		g.lim = rate.NewLimiter(rate.Limit(c.h.o.MessageRate), c.h.o.MessageBurst)
	}
	if g.lim.Allow() {
		g.refused = 0
		return true
	}
	g.refused++
	if g.refused >= c.h.o.MessageBurst {
		g.closed = true
		go c.closeAfterAnswers(websocket.StatusPolicyViolation, rateLimitedReason)
		return false
	}
	c.fail(messageID(b), perr(CodeRateLimited, "too many messages: a connection may send %s a second (a burst of %d); this one was not processed, send it again later",
		strconv.FormatFloat(c.h.o.MessageRate, 'f', -1, 64), c.h.o.MessageBurst))
	return false
}

// messageID is the id of client message b, to name in its answer ("" when it has none that
// Decode would take).
func messageID(b []byte) string {
	env, err := decodeEnvelope(b)
	if err != nil || len(env.ID) > MaxMessageID {
		return ""
	}
	return env.ID
}

// checkFilterBytes refuses a filter (id fid, JSON raw) that would bring the JSON its session's
// filters are stored in past MaxSessionFilterBytes. Filters are stored as they were sent (a
// reconnect returns them): without a bound, fifty of a hundred values in five lists each kept
// over a megabyte in Redis for every session.
func (c *conn) checkFilterBytes(fid string, raw json.RawMessage) error {
	c.mu.Lock()
	recs := append(append(make([]store.FilterRec, 0, len(c.filters)+1), c.filters...), store.FilterRec{ID: fid, Raw: raw})
	c.mu.Unlock()
	b, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	if limit := c.h.o.MaxSessionFilterBytes; len(b) > limit {
		return perr(CodeInvalidFilter, "a session's filters are stored in at most %d bytes of JSON; with this one they would take %d: unsubscribe one or send a smaller one", limit, len(b))
	}
	return nil
}

// storeCapped stores new session ss unless its key already has MaxSessionsPerKey live sessions
// and v2 streams (a *SessionLimitError); the store counts and stores in one step, so concurrent
// creates (REST, v2, subscribes on any replica) never take the key over its cap. Not cancelled
// with ctx: a create that reached Redis is known to have.
func (h *Hub) storeCapped(ctx context.Context, ss store.Session, ttl time.Duration) error {
	err := h.o.Store.Create(context.WithoutCancel(ctx), ss, ttl, h.o.MaxSessionsPerKey)
	if errors.Is(err, store.ErrSessionLimit) {
		// The soonest a slot can free: the shorter window, a session's (a v2 stream's is longer).
		return &SessionLimitError{Limit: h.o.MaxSessionsPerKey, RetryAfter: min(h.o.Window, h.o.V2Window)}
	}
	return err
}

// sessionLimitErr words a subscribe refused at the key's session cap for a WebSocket client.
func sessionLimitErr(e *SessionLimitError) *ProtocolError {
	return &ProtocolError{Code: CodeSessionLimit, Message: fmt.Sprintf("too many sessions and v2 streams for this key (limit %d live at once): "+
		"a subscribe on a connection without a session makes one; delete one, let one expire or reconnect to one", e.Limit)}
}

// closeAfterAnswers closes the connection once the answers already queued (to the messages
// handled and refused before the one that ends it) are written, or after answerDrain when the
// writer does not get them out (a client that does not read): ending at once would drop them,
// and a client could not tell which of its messages were handled.
func (c *conn) closeAfterAnswers(code websocket.StatusCode, reason string) {
	deadline := time.Now().Add(answerDrain)
	// writing covers an answer the writer has taken from the queue and is still writing.
	for (c.q.pendingControl() || c.writing.Load()) && time.Now().Before(deadline) && c.ctx.Err() == nil {
		time.Sleep(answerPoll)
	}
	c.close(code, reason)
}

const (
	// answerDrain bounds how long a connection ending on the message limit waits for its queued
	// answers to be written; answerPoll is how often it looks.
	answerDrain = time.Second
	answerPoll  = 5 * time.Millisecond
)
