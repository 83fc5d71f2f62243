// Package ratelimit decides whether a request may go on: GCRA in Redis (go-redis/redis_rate),
// shared by every edge replica, and an in-process token bucket (golang.org/x/time/rate) used
// while Redis is unreachable, so the edge keeps limiting (per replica) instead of failing or
// letting everything through.
package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"golang.org/x/time/rate"
)

// Limit is a sustained rate per second with a burst.
type Limit struct {
	Rate  int // requests per second
	Burst int // requests allowed at once from an idle budget
}

// Decision is the outcome for one request.
type Decision struct {
	Allowed    bool
	Limit      int           // the sustained rate, for X-RateLimit-Limit
	Remaining  int           // requests that could be made right now
	RetryAfter time.Duration // when refused: wait this long
	ResetAfter time.Duration // until the budget is full again
	Local      bool          // decided in process (Redis unreachable)
}

// Options tune a Limiter.
type Options struct {
	// Timeout bounds one decision in Redis (default 100ms).
	Timeout time.Duration
	// FallbackFor is how long the limiter decides in process after a Redis failure before it
	// tries Redis again (default 2s).
	FallbackFor   time.Duration
	Log           *slog.Logger
	MeterProvider metric.MeterProvider
}

// Limiter decides requests against named budgets. It is safe for concurrent use.
type Limiter struct {
	redis   *redis_rate.Limiter // nil: always in process
	o       Options
	local   *expirable.LRU[string, *rate.Limiter]
	localMu sync.Mutex // makes get-or-add atomic
	// downUntil is the UnixNano until which decisions are local; 0 when Redis is healthy.
	downUntil atomic.Int64

	decisions metric.Int64Counter
	fallback  metric.Int64Counter
}

// New returns a limiter over rdb (nil: in process only).
func New(rdb redis.UniversalClient, o Options) *Limiter {
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Millisecond
	}
	if o.FallbackFor <= 0 {
		o.FallbackFor = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	mp := o.MeterProvider
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	l := &Limiter{o: o, local: expirable.NewLRU[string, *rate.Limiter](200_000, nil, 10*time.Minute)}
	if rdb != nil {
		l.redis = redis_rate.NewLimiter(newBatchingScripter(rdb, o.Timeout, 256))
	}
	m := mp.Meter("chainintel/edge/ratelimit")
	l.decisions, _ = m.Int64Counter("edge_ratelimit_decisions_total", metric.WithDescription("rate-limit decisions by outcome"))
	l.fallback, _ = m.Int64Counter("edge_ratelimit_local_fallback_total",
		metric.WithDescription("decisions taken by the in-process limiter because Redis was unreachable"))
	return l
}

var (
	allowedAttr = metric.WithAttributes(attribute.Bool("allowed", true))
	refusedAttr = metric.WithAttributes(attribute.Bool("allowed", false))
)

// Allow takes one request from the budget named key.
func (l *Limiter) Allow(ctx context.Context, key string, lim Limit) Decision {
	d := l.allow(ctx, key, lim)
	if d.Allowed {
		l.decisions.Add(ctx, 1, allowedAttr)
	} else {
		l.decisions.Add(ctx, 1, refusedAttr)
	}
	return d
}

func (l *Limiter) allow(ctx context.Context, key string, lim Limit) Decision {
	if l.redis != nil {
		until := l.downUntil.Load()
		if until == 0 || time.Now().UnixNano() >= until {
			rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
			res, err := l.redis.Allow(rctx, key, redis_rate.Limit{Rate: lim.Rate, Burst: lim.Burst, Period: time.Second})
			cancel()
			if err == nil {
				if until != 0 && l.downUntil.CompareAndSwap(until, 0) {
					l.o.Log.Info("rate limiting back on Redis")
				}
				return Decision{Allowed: res.Allowed > 0, Limit: lim.Rate, Remaining: res.Remaining,
					RetryAfter: max(res.RetryAfter, 0), ResetAfter: max(res.ResetAfter, 0)}
			}
			if ctx.Err() != nil {
				// The caller went away; do not blame Redis.
				return Decision{Allowed: false, Limit: lim.Rate, RetryAfter: time.Second}
			}
			next := time.Now().Add(l.o.FallbackFor).UnixNano()
			if l.downUntil.CompareAndSwap(until, next) && until == 0 {
				l.o.Log.Warn("Redis unreachable for rate limiting; limiting in process (per replica) until it answers",
					"error", err, "retry_every", l.o.FallbackFor)
			}
		}
		l.fallback.Add(ctx, 1)
	}
	return l.allowLocal(key, lim)
}

func (l *Limiter) allowLocal(key string, lim Limit) Decision {
	name := key + "|" + strconv.Itoa(lim.Rate) + "|" + strconv.Itoa(lim.Burst)
	l.localMu.Lock()
	rl, ok := l.local.Get(name)
	if !ok {
		rl = rate.NewLimiter(rate.Limit(lim.Rate), lim.Burst)
		l.local.Add(name, rl)
	}
	l.localMu.Unlock()
	now := time.Now()
	r := rl.ReserveN(now, 1)
	d := Decision{Limit: lim.Rate, Local: true}
	if delay := r.DelayFrom(now); !r.OK() || delay > 0 {
		r.CancelAt(now)
		d.RetryAfter = delay
		if !r.OK() {
			d.RetryAfter = time.Second
		}
	} else {
		d.Allowed = true
	}
	tokens := rl.TokensAt(now)
	d.Remaining = max(int(math.Floor(tokens)), 0)
	d.ResetAfter = time.Duration((float64(lim.Burst) - tokens) / float64(lim.Rate) * float64(time.Second))
	return d
}

// Degraded reports whether decisions are currently taken in process.
func (l *Limiter) Degraded() bool {
	u := l.downUntil.Load()
	return l.redis == nil || (u != 0 && time.Now().UnixNano() < u)
}
