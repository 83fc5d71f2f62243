package ws

import (
	"context"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/ledger"
	"github.com/coder/websocket"
)

// Close codes of a connection ended because of its key or its credits (documented in
// docs/stream-fanout.md).
const (
	// CloseKeyChanged: the key was revoked or its tier changed. Connecting again is refused
	// for a revoked key and applies the new tier otherwise; the session is kept for it.
	CloseKeyChanged websocket.StatusCode = 4401
	// CloseCreditLimit: the caller's tier has no overage and its credits of the billing
	// period are spent.
	CloseCreditLimit websocket.StatusCode = 4429
)

const (
	keyChangedReason  = "API key revoked or its tier changed; connect again (a revoked key is refused)"
	creditLimitReason = "credit limit reached"
)

// keyChangeGrace is how long after a key's invalidation its new connects and REST calls are
// refused: an edge that missed the invalidation message keeps its cached verification for up
// to its local TTL (1 s), and a call it let through may still be on its way here.
const keyChangeGrace = 2 * time.Second

// keyWatch remembers which keys changed recently.
type keyWatch struct {
	mu      sync.Mutex
	changed map[string]time.Time // key hash → when its invalidation arrived (this host's clock)
	// missed is the edge's record as the last KeysMissed read it (key hash → its latest
	// invalidation, Redis server time), for a connection admitted before it but added to the
	// hub after its snapshot.
	missed map[string]time.Time
}

// KeyHash is the caller's key hash the edge sent under the identity's signature
// (httpx.CallerKeyFrom, put in ctx by the identity middleware); "" when absent or not a hex
// SHA-256. A header no signature covers never gets here: the middleware refuses the call.
func KeyHash(ctx context.Context) string {
	v := strings.ToLower(httpx.CallerKeyFrom(ctx))
	if len(v) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(v); err != nil {
		return ""
	}
	return v
}

// KeysChanged applies an invalidation of the edge's (edge:keys:invalidate: hex hashes,
// comma-separated): every connection of those keys on this replica is closed with
// CloseKeyChanged, and their new connects and REST calls are refused for keyChangeGrace. It
// returns how many connections it closed.
func (h *Hub) KeysChanged(payload string) int {
	now := h.o.Now()
	set := map[string]bool{}
	h.keys.mu.Lock()
	h.keys.forgetOld(now)
	for _, hx := range strings.Split(payload, ",") {
		if hx = strings.ToLower(strings.TrimSpace(hx)); len(hx) == 64 {
			set[hx] = true
			h.keys.changed[hx] = now
		}
	}
	h.keys.mu.Unlock()
	n := 0
	for _, c := range h.snapshot() {
		if c.keyHash != "" && set[c.keyHash] {
			c.close(CloseKeyChanged, keyChangedReason)
			n++
		}
	}
	return n
}

// forgetOld drops the keys changed longer than keyChangeGrace before now; w.mu is held.
func (w *keyWatch) forgetOld(now time.Time) {
	if w.changed == nil {
		w.changed = map[string]time.Time{}
	}
	for hx, at := range w.changed {
		if now.Sub(at) > keyChangeGrace {
			delete(w.changed, hx)
		}
	}
}

// KeysMissed applies the invalidations this replica's subscription may have missed while it
// was away (hex hash → the time of its latest invalidation, from the edge's record,
// keyevents.Recent, read when the Redis server's clock said serverNow). A connection of one of
// those keys admitted before the invalidation could have reached every edge (its time plus
// keyChangeGrace) is closed with CloseKeyChanged; one admitted later was verified after the
// change and stays. Both times are the Redis server's, so no host's clock skews the comparison.
// Keys invalidated within keyChangeGrace are refused as KeysChanged refuses them. The record
// is kept for the connections being admitted meanwhile (keyInvalidatedSince). It returns how
// many connections it closed.
func (h *Hub) KeysMissed(changed map[string]time.Time, serverNow time.Time) int {
	now := h.o.Now()
	skew := now.Sub(serverNow)
	h.keys.mu.Lock()
	h.keys.forgetOld(now)
	for hx, at := range changed {
		if serverNow.Sub(at) <= keyChangeGrace && at.Add(skew).After(h.keys.changed[hx]) {
			h.keys.changed[hx] = at.Add(skew)
		}
	}
	// Kept before the snapshot: a connection the snapshot misses is added to the hub after it,
	// and checks this record then.
	h.keys.missed = changed
	h.keys.mu.Unlock()
	n := 0
	for _, c := range h.snapshot() {
		at, ok := changed[c.keyHash]
		if c.keyHash != "" && ok && !c.closing.Load() && c.admitted.Before(at.Add(keyChangeGrace)) {
			c.close(CloseKeyChanged, keyChangedReason)
			n++
		}
	}
	return n
}

// keyInvalidatedSince reports whether a connection of the key named by hash, admitted at
// admitted (Redis server time) and just added to the hub, must close: its key was invalidated
// within keyChangeGrace, or the last record KeysMissed read has an invalidation it was admitted
// before (plus keyChangeGrace), which that KeysMissed's snapshot may have missed.
func (h *Hub) keyInvalidatedSince(hash string, admitted time.Time) bool {
	if hash == "" {
		return false
	}
	if h.KeyJustChanged(hash) {
		return true
	}
	h.keys.mu.Lock()
	defer h.keys.mu.Unlock()
	at, ok := h.keys.missed[hash]
	return ok && admitted.Before(at.Add(keyChangeGrace))
}

// KeyJustChanged reports whether the key named by hash was invalidated within keyChangeGrace.
func (h *Hub) KeyJustChanged(hash string) bool {
	if hash == "" {
		return false
	}
	h.keys.mu.Lock()
	defer h.keys.mu.Unlock()
	at, ok := h.keys.changed[hash]
	return ok && h.o.Now().Sub(at) <= keyChangeGrace
}

// ErrNoKey refuses a connect whose identity's signature covers no caller key hash: its stream
// could not be closed when the key is revoked.
var ErrNoKey = &Refusal{Status: http.StatusUnauthorized, Message: "invalid caller identity: " + httpx.HeaderCallerKey + " (the caller's key hash, signed by the edge) is required"}

// ErrKeyChanged refuses a call of a key invalidated within keyChangeGrace.
var ErrKeyChanged = &Refusal{Status: http.StatusServiceUnavailable, Message: "the API key was just revoked or its tier changed; retry", RetryAfter: time.Second}

// close ends the connection with code: it stops taking client messages and deliveries at once,
// and is saved and closed as at any disconnect.
func (c *conn) close(code websocket.StatusCode, reason string) {
	c.closing.Store(true)
	go c.end(code, reason)
}

// creditKey names the edge's live credit ledger hash of id's billed entity for the billing
// period holding now.
func creditKey(id Identity, now time.Time) string {
	return ledger.Key(ledger.BilledEntity(id.UserID, id.OrgID), now)
}

// CreditsSpent reports whether id's tier has a credit limit (Options.CreditLimit) and its billed
// entity's credits of the period are spent, as the edge's live ledger says. A ledger with no
// figure yet this period is not spent.
func (h *Hub) CreditsSpent(ctx context.Context, id Identity) (bool, error) {
	limit, ok := h.o.CreditLimit(id.Tier)
	if !ok {
		return false, nil
	}
	used, err := h.o.Store.LedgerUsed(ctx, []string{creditKey(id, h.o.Now())})
	if err != nil {
		return false, err
	}
	return used[0] >= limit, nil
}

// CreditsRetryAfter is how long until the next billing period starts, when a caller refused
// for its spent credits may be admitted again: the Retry-After of those refusals, as the edge
// answers its calls'.
func (h *Hub) CreditsRetryAfter() time.Duration {
	now := h.o.Now()
	_, end := ledger.PeriodOf(now)
	return end.Sub(now)
}

// creditCheckEvery is how often the connections of tiers with a credit limit are checked against
// the edge's ledger (RunCheckpoints): a connection whose entity's credits the ledger finds spent
// gets deliveries for at most this long after, whether or not it was delivered anything since
// the ledger last looked below the limit.
const creditCheckEvery = time.Second

// checkCredits closes with CloseCreditLimit the open connections of tiers with a credit limit
// whose billed entity's credits the edge's live ledger finds spent, reading every such entity's
// figure in one round trip. The ledger counts a delivery once the edge's metering consumer has,
// so a stream may overshoot by what it delivers within that lag and one check period.
func (h *Hub) checkCredits(ctx context.Context) {
	var names []string
	var conns []*conn
	byName := map[string]bool{}
	now := h.o.Now()
	for _, c := range h.snapshot() {
		if _, ok := h.o.CreditLimit(c.id.Tier); !ok || c.closing.Load() {
			continue
		}
		conns = append(conns, c)
		if n := creditKey(c.id, now); !byName[n] {
			byName[n] = true
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, quotaCallTimeout)
	defer cancel()
	used, err := h.o.Store.LedgerUsed(cctx, names)
	if err != nil {
		if ctx.Err() == nil {
			h.o.Log.Warn("reading the credit ledger failed; streams' credits are checked again in a second", "error", err)
		}
		return
	}
	usedBy := make(map[string]int64, len(names))
	for i, n := range names {
		usedBy[n] = used[i]
	}
	for _, c := range conns {
		limit, _ := h.o.CreditLimit(c.id.Tier)
		if usedBy[creditKey(c.id, now)] >= limit {
			c.close(CloseCreditLimit, creditLimitReason)
		}
	}
}

// resumeSpent reports, as a connection's deliveries resume after its key's quota refused them,
// whether its tier has a credit limit its billed entity has spent. The quota and the credits
// are often spent by the same deliveries, and the ledger counts them only after the edge's
// consumer has: a check before that read the limit unspent, and the deliveries held back by the
// quota would otherwise start flowing again (when its hour turns) until the next periodic
// check. A failed read lets them go on, left to that check.
func (c *conn) resumeSpent() bool {
	if !c.creditRecheck.Swap(false) {
		return false
	}
	ctx, cancel := context.WithTimeout(c.ctx, quotaCallTimeout)
	defer cancel()
	spent, err := c.h.CreditsSpent(ctx, c.id)
	if err != nil {
		c.h.o.Log.Warn("reading the credit ledger failed; the stream's credits are checked again in a second", "key", c.id.KeyID, "error", err)
		return false
	}
	return spent
}
