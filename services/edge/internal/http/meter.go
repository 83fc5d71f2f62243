package http

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/chainintel/chainintel/services/edge/tiers"
	"github.com/google/uuid"
)

// Ledger holds credits for calls in flight and records what they cost
// (metering.CreditLedger).
type Ledger interface {
	Reserve(ctx context.Context, e usage.Entity, at time.Time, n, limit int64) (metering.Hold, error)
	Settle(h metering.Hold, e usage.Entity, n int64, at time.Time, eventID string) int64
}

// PeriodIncluded reads the included credits recorded for a billed entity's period
// (usage.IncludedCache; 0 when none was recorded yet): Included reads through, Cached only
// answers what is already known.
type PeriodIncluded interface {
	Included(ctx context.Context, e usage.Entity, start time.Time) (int64, error)
	Cached(e usage.Entity, start time.Time) (int64, bool)
}

// UsageRecorder queues a usage event without blocking (metering.Producer).
type UsageRecorder interface {
	Record(id string, call *eventsv1.UsageCall) bool
}

// Metering charges credits for calls made with a key: a route's weight per call, or per row
// the service reported for per-row routes; failed calls (4xx/5xx) cost nothing. Before a call is
// forwarded, the most it can cost (the weight times its bound: the limit asked for, the distinct
// addresses of a batch) is held in the ledger; a tier without overage gets 429 "credit limit
// reached" on credited routes when that does not fit in what its period's included credits, less
// what this replica's calls in flight hold, leave. When the status is known the hold becomes
// the call's cost (never more than was held). Each response carries X-Credits-Used,
// X-Credits-Period-Used and X-Credits-Period-Limit, and each call becomes one usage event.
// WebSocket streams are metered by stream-fanout per delivered transfer.
//
// A period's included credits are the greatest of the tiers of the billed entity's keys that
// made calls in it (the billing record, usage.upsertPeriods, keeps that figure): a key of a
// smaller tier used after one of a greater (a downgrade) gets the greater allowance until the
// period ends. The check and X-Credits-Period-Limit use the same figure (Included; nil: the
// key's tier alone; see included for when the record is read).
type Metering struct {
	Tiers    tiers.Table
	Ledger   Ledger
	Usage    UsageRecorder
	Included PeriodIncluded
	Now      func() time.Time // default time.Now
}

// included is the period's included credits as the billing record keeps them, with the calling
// key's tier among those used. When the record cannot be read, the key's tier alone: the
// smaller allowance, never one the record would not show. Only a call that costs credits reads
// the record (its check and its X-Credits-Period-Limit need the figure); a free call's header
// says what is already known, so free routes never wait on PostgreSQL.
func (m Metering) included(ctx context.Context, rt routes.Route, tr tiers.Tier, e usage.Entity, at time.Time) int64 {
	n := tr.IncludedCredits
	if m.Included == nil {
		return n
	}
	start, _ := usage.PeriodOf(at)
	if rt.Credits <= 0 {
		if rec, ok := m.Included.Cached(e, start); ok {
			n = max(n, rec)
		}
		return n
	}
	if rec, err := m.Included.Included(ctx, e, start); err == nil {
		n = max(n, rec)
	}
	return n
}

// Middleware is the Metering middleware.
func (m Metering) Middleware(rt routes.Route, next http.Handler) http.Handler {
	if rt.WebSocket {
		return next
	}
	now := m.Now
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := httpx.IdentityFrom(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		start := now()
		units, err := boundUnits(rt, r)
		if err != nil {
			writeBodyError(w, err)
			return
		}
		tr, _ := m.Tiers.Get(id.Tier)
		entity := usage.BilledEntity(id.UserID, id.OrgID)
		cost, limit := rt.Credits*units, int64(-1)
		included := m.included(r.Context(), rt, tr, entity, start)
		if _, hard := tr.CreditLimit(); rt.Credits > 0 && hard {
			limit = included
		}
		hold, err := m.Ledger.Reserve(r.Context(), entity, start, cost, limit)
		if err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds)) // a dependency outage, as every service answers it
			proxy.WriteError(w, http.StatusServiceUnavailable, "credit metering is unavailable; retry later")
			return
		}
		limitText := strconv.FormatInt(included, 10)
		if !hold.OK {
			refuseCredits(w, rt, hold, units, limit, start)
			return
		}
		ctx, ci := proxy.WithCallInfo(r.Context())
		mw := &meteredWriter{ResponseWriter: w}
		eventID := uuid.Must(uuid.NewV7()).String()
		// Deferred, so that it runs when the handler panics too: the reverse proxy aborts a
		// response whose body the service or the client cut short with http.ErrAbortHandler,
		// after the header (and Settle) went out. A hold is always settled and a settled call's
		// usage event always recorded, or the call would stay in this replica's live total.
		defer func() {
			if !mw.wrote { // panicked before answering: the call failed and costs nothing
				mw.status = http.StatusInternalServerError
				m.Ledger.Settle(hold, entity, 0, start, eventID)
			}
			m.Usage.Record(eventID, &eventsv1.UsageCall{
				KeyId: id.KeyID, UserId: id.UserID, OrgId: id.OrgID, Route: rt.Pattern, Method: rt.Method,
				Status: int32(mw.status), Credits: mw.credits, Rows: max(ci.Rows, 0), TimeMs: start.UnixMilli(),
				DurationUs: now().Sub(start).Microseconds(), Unit: string(rt.Unit), Tier: id.Tier,
			})
		}()
		mw.onHeader = func(status int) {
			credits := callCredits(rt, status, ci.Rows, cost)
			total := m.Ledger.Settle(hold, entity, credits, start, eventID)
			mw.credits = credits
			h := w.Header() // canonical names, assigned without canonicalizing again
			h["X-Credits-Used"] = []string{strconv.FormatInt(credits, 10)}
			h["X-Credits-Period-Used"] = []string{strconv.FormatInt(total, 10)}
			h["X-Credits-Period-Limit"] = []string{limitText}
		}
		next.ServeHTTP(mw, r.WithContext(ctx))
		if !mw.wrote {
			mw.WriteHeader(http.StatusOK)
		}
	})
}

// callCredits is what a call answered with status costs: nothing when it failed, else the
// route's weight, per reported row on per-row routes (one unit when none is reported), never
// more than the call held.
func callCredits(rt routes.Route, status int, rows, held int64) int64 {
	if status >= 400 {
		return 0
	}
	credits := rt.Credits
	if rt.Unit == routes.PerRow && rows >= 0 {
		credits = rt.Credits * rows
	}
	return min(credits, held)
}

// refuseCredits answers a call whose most possible cost does not fit in what is left of a
// tier's included credits: 429, Retry-After at the next period.
func refuseCredits(w http.ResponseWriter, rt routes.Route, hold metering.Hold, units, limit int64, now time.Time) {
	h := w.Header()
	h.Set("X-Credits-Used", "0")
	h.Set("X-Credits-Period-Used", strconv.FormatInt(hold.Used, 10))
	h.Set("X-Credits-Period-Limit", strconv.FormatInt(limit, 10))
	_, end := usage.PeriodOf(now)
	h.Set("Retry-After", strconv.Itoa(ceilSeconds(end.Sub(now), 1)))
	left := max(limit-hold.Used-hold.Held, 0)
	msg := "credit limit reached"
	switch {
	case left == 0:
	case rt.Unit == routes.PerRow:
		msg = fmt.Sprintf("credit limit reached: this call can cost up to %d credits (%d per row, up to %d rows) and %d of the period's %d are left",
			rt.Credits*units, rt.Credits, units, left, limit)
	default:
		msg = fmt.Sprintf("credit limit reached: this call costs %d credits and %d of the period's %d are left", rt.Credits, left, limit)
	}
	proxy.WriteError(w, http.StatusTooManyRequests, msg)
}

// boundUnits is the most units a call can be charged, known before it is forwarded: 1 on a
// per-call route; on a per-row route the rows its limit parameter asks for (the default when
// absent; 1 when the service will refuse the value, as such a call costs nothing), or the
// distinct strings of its body's list (a batch's addresses; the body is read and put back for
// the proxy).
func boundUnits(rt routes.Route, r *http.Request) (int64, error) {
	b := rt.Bound
	switch {
	case rt.Unit != routes.PerRow:
		return 1, nil
	case b.Param != "":
		vs := r.URL.Query()[b.Param]
		if len(vs) == 0 || strings.TrimSpace(vs[0]) == "" && len(vs) == 1 {
			return b.Default, nil
		}
		n, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
		if len(vs) > 1 || err != nil || n < 1 || n > b.Max {
			return 1, nil
		}
		return n, nil
	case b.List != "":
		return distinctListed(r, b.List, b.Max)
	}
	return 1, nil
}

// distinctListed counts the distinct strings of the body's list (decoded as the services
// decode it; at least 1, at most most: a body the service cannot read costs nothing, and one
// over its batch limit is refused).
func distinctListed(r *http.Request, list string, most int64) (int64, error) {
	body, err := bufferBody(r)
	if err != nil {
		return 0, err
	}
	// Decoded into a struct, as the services decode their bodies (keys matched as
	// encoding/json matches them).
	var doc struct {
		Addresses []string `json:"addresses"`
		EntityIDs []string `json:"entity_ids"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return 1, nil
	}
	items := doc.Addresses
	if list == "entity_ids" {
		items = doc.EntityIDs
	}
	seen := make(map[string]struct{}, len(items))
	for _, s := range items {
		seen[s] = struct{}{}
	}
	return min(max(int64(len(seen)), 1), most), nil
}

// meteredWriter computes credits when the status is known, so the credit headers go out with
// the response's own headers.
type meteredWriter struct {
	http.ResponseWriter
	onHeader func(status int)
	wrote    bool
	status   int
	credits  int64
}

func (w *meteredWriter) WriteHeader(code int) {
	if !w.wrote && code >= 200 {
		w.wrote, w.status = true, code
		w.onHeader(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *meteredWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush, deadlines).
func (w *meteredWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush forwards to the underlying writer.
func (w *meteredWriter) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack forwards to the underlying writer.
func (w *meteredWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}
