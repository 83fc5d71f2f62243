package http

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/internal/tiers"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/google/uuid"
)

// Ledger answers and records the credits a billed entity used this period
// (metering.CreditLedger).
type Ledger interface {
	Used(ctx context.Context, e usage.Entity) (int64, error)
	Add(e usage.Entity, n int64, at time.Time) int64
}

// UsageRecorder queues a usage event without blocking (metering.Producer).
type UsageRecorder interface {
	Record(id string, call *eventsv1.UsageCall) bool
}

// Metering charges credits for calls made with a key: a route's weight per call, or per row
// the service reported for per-row routes; failed calls (4xx/5xx) cost nothing. Each response
// carries X-Credits-Used, X-Credits-Period-Used and X-Credits-Period-Limit, and each call
// becomes one usage event. A tier without overage gets 429 "credit limit reached" on credited
// routes once its period's included credits are spent. WebSocket streams are metered by
// stream-fanout per delivered transfer.
type Metering struct {
	Tiers  tiers.Table
	Ledger Ledger
	Usage  UsageRecorder
	Now    func() time.Time // default time.Now
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
		tr, _ := m.Tiers.Get(id.Tier)
		entity := usage.BilledEntity(id.UserID, id.OrgID)
		used, err := m.Ledger.Used(r.Context(), entity)
		if err != nil {
			w.Header().Set("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds)) // a dependency outage, as every service answers it
			proxy.WriteError(w, http.StatusServiceUnavailable, "credit metering is unavailable; retry later")
			return
		}
		limit := strconv.FormatInt(tr.IncludedCredits, 10)
		if rt.Credits > 0 && !tr.Overage && used >= tr.IncludedCredits {
			h := w.Header()
			h.Set("X-Credits-Used", "0")
			h.Set("X-Credits-Period-Used", strconv.FormatInt(used, 10))
			h.Set("X-Credits-Period-Limit", limit)
			_, end := usage.PeriodOf(start)
			h.Set("Retry-After", strconv.Itoa(ceilSeconds(end.Sub(start), 1)))
			proxy.WriteError(w, http.StatusTooManyRequests, "credit limit reached")
			return
		}
		ctx, ci := proxy.WithCallInfo(r.Context())
		mw := &meteredWriter{ResponseWriter: w}
		mw.onHeader = func(status int) {
			var credits int64
			if status < 400 {
				credits = rt.Credits
				if rt.Unit == routes.PerRow && ci.Rows >= 0 {
					credits = rt.Credits * ci.Rows
				}
			}
			total := used
			if credits > 0 {
				total = m.Ledger.Add(entity, credits, start)
			}
			mw.credits = credits
			h := w.Header() // canonical names, assigned without canonicalizing again
			h["X-Credits-Used"] = []string{strconv.FormatInt(credits, 10)}
			h["X-Credits-Period-Used"] = []string{strconv.FormatInt(total, 10)}
			h["X-Credits-Period-Limit"] = []string{limit}
		}
		next.ServeHTTP(mw, r.WithContext(ctx))
		if !mw.wrote {
			mw.WriteHeader(http.StatusOK)
		}
		rows := max(ci.Rows, 0)
		m.Usage.Record(uuid.Must(uuid.NewV7()).String(), &eventsv1.UsageCall{
			KeyId: id.KeyID, UserId: id.UserID, OrgId: id.OrgID, Route: rt.Pattern, Method: rt.Method,
			Status: int32(mw.status), Credits: mw.credits, Rows: rows, TimeMs: start.UnixMilli(),
			DurationUs: now().Sub(start).Microseconds(), Unit: string(rt.Unit), Tier: id.Tier,
		})
	})
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
