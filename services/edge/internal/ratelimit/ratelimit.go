// Package ratelimit decides whether a request may go on: GCRA in Redis (go-redis/redis_rate),
// shared by every edge replica, and an in-process token bucket (golang.org/x/time/rate) used
// while Redis is unreachable, so the edge keeps limiting (per replica) instead of failing or
// letting everything through.
//
// Redis stays the only authority on a budget, but a replica does not ask it once per request
// when it need not:
//
//   - Leases. A budget with plenty of room left hands a replica several tokens at once
//     (redis_rate's AllowAtMost); the replica spends them on its next requests for at most
//     LeaseTTL. A lease is never more than a quarter of what Redis last said was left (besides a
//     token for each request waiting for it, which spends it at once), and it
//     grows (doubling, up to MaxLease) only while the replica spends whole leases before they
//     expire, so a budget near its limit is decided one request at a time, exactly as without
//     leases. Tokens still unspent when a lease expires go back to Redis. Every admitted
//     request was paid for in Redis, so the replicas together never admit more than the budget.
//   - One fetch at a time. A replica has at most one lease request per budget on its way to
//     Redis; a request that finds the lease empty while one is on its way waits for it (within
//     the decision's Redis timeout) and takes from it, and the next lease asked for covers the
//     requests waiting, so concurrent requests never race each other for leases sized from the
//     same stale remaining, and X-RateLimit-Remaining is the budget less what was admitted.
//   - Refusals. When Redis refuses, it says when the next token is due; until then the replica
//     refuses that budget locally, since tokens only get scarcer.
package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/lifecycle"
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
	Limit      int           // the budget when full (the burst), for X-RateLimit-Limit; Remaining never exceeds it
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
	FallbackFor time.Duration
	// LeaseTTL is how long a replica may hold tokens leased from Redis (default 100ms);
	// MaxLease caps one lease (default 64; 1 turns leasing off).
	LeaseTTL      time.Duration
	MaxLease      int
	Log           *slog.Logger
	MeterProvider metric.MeterProvider
}

// Limiter decides requests against named budgets. It is safe for concurrent use.
type Limiter struct {
	redis   *redis_rate.Limiter // nil: always in process
	o       Options
	local   *expirable.LRU[string, *localBucket]
	localMu sync.Mutex // makes get-or-add atomic
	leases  *expirable.LRU[budgetKey, *lease]
	leaseMu sync.Mutex // makes get-or-add atomic
	// holding are the leases that may have unspent tokens, for Run to give back when they expire.
	holding map[*lease]budgetKey
	holdMu  sync.Mutex
	// downUntil is the UnixNano until which decisions are local; 0 when Redis is healthy.
	downUntil atomic.Int64
	// connFails counts connection errors since Redis last answered; lastOK is the UnixNano of
	// its last answer. Together they tell an outage from a slow answer (see outage).
	connFails atomic.Int32
	lastOK    atomic.Int64

	decisions  metric.Int64Counter
	fallback   metric.Int64Counter
	calls      metric.Int64Counter
	redisCalls atomic.Int64
	// moving counts tokens on their way: asked for by a refill, or being given back.
	moving atomic.Int64
}

// budgetKey names one budget under one limit (a tier change starts a fresh local lease).
type budgetKey struct {
	key string
	lim Limit
}

// lease is a replica's share of one budget in Redis.
type lease struct {
	mu         sync.Mutex
	tokens     int           // leased from Redis, not yet spent
	expires    time.Time     // tokens are spent before this or given back
	size       int           // the next lease asked for
	remaining  int           // what Redis said was left after the last lease; -1: not asked yet
	resetAt    time.Time     // when the budget is full again, as of the last answer
	refusedTil time.Time     // Redis refused; refuse locally until then
	fetching   bool          // a lease request (refill or a request's own) is on its way
	landed     chan struct{} // closed when the lease request on its way lands (or fails)
	waiting    int           // requests waiting for the lease request on its way
	answeredAt time.Time     // when Redis last answered for this budget (remaining is as of then)
}

// localBucket is a budget decided in process, with the time it was last used.
type localBucket struct {
	rl       *rate.Limiter
	lastUsed time.Time
}

// connFailuresToOpen is how many connection errors in a row (refused, reset, closed) take the
// limiter off Redis.
const connFailuresToOpen = 3

// New returns a limiter over rdb (nil: in process only).
func New(rdb redis.UniversalClient, o Options) *Limiter {
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Millisecond
	}
	if o.FallbackFor <= 0 {
		o.FallbackFor = 2 * time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 100 * time.Millisecond
	}
	if o.MaxLease <= 0 {
		o.MaxLease = 64
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	mp := o.MeterProvider
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	l := &Limiter{o: o, local: expirable.NewLRU[string, *localBucket](200_000, nil, 10*time.Minute),
		leases: expirable.NewLRU[budgetKey, *lease](200_000, nil, 10*time.Minute), holding: map[*lease]budgetKey{}}
	if rdb != nil {
		l.redis = redis_rate.NewLimiter(newBatchingScripter(rdb, o.Timeout, 256))
	}
	l.lastOK.Store(time.Now().UnixNano())
	m := mp.Meter("chainintel/edge/ratelimit")
	l.decisions, _ = m.Int64Counter("edge_ratelimit_decisions_total", metric.WithDescription("rate-limit decisions by outcome"))
	l.fallback, _ = m.Int64Counter("edge_ratelimit_local_fallback_total",
		metric.WithDescription("decisions taken by the in-process limiter, by reason: unreachable (the limiter is off Redis: connection errors in a row, or no answer for EDGE_LIMITER_FALLBACK) or slow (this decision's Redis call missed EDGE_LIMITER_TIMEOUT or failed once; the next goes to Redis)"))
	l.calls, _ = m.Int64Counter("edge_ratelimit_redis_calls_total",
		metric.WithDescription("rate-limit calls to Redis (leases, single decisions and returned tokens)"))
	if rdb != nil {
		// Both reasons start at zero, so the alert's rate() sees the first outage.
		l.fallback.Add(context.Background(), 0, unreachableAttr)
		l.fallback.Add(context.Background(), 0, slowAttr)
	}
	return l
}

var (
	allowedAttr = metric.WithAttributes(attribute.Bool("allowed", true))
	refusedAttr = metric.WithAttributes(attribute.Bool("allowed", false))
	// The reasons of a decision taken in process: the limiter is off Redis (an outage), or
	// this one decision's Redis call failed while the limiter stays on Redis.
	unreachableAttr = metric.WithAttributes(attribute.String("reason", "unreachable"))
	slowAttr        = metric.WithAttributes(attribute.String("reason", "slow"))
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
		reason := unreachableAttr
		until := l.downUntil.Load()
		if until == 0 || time.Now().UnixNano() >= until {
			d, err := l.allowRedis(ctx, key, lim)
			if err == nil {
				l.connFails.Store(0)
				l.lastOK.Store(time.Now().UnixNano())
				if until != 0 && l.downUntil.CompareAndSwap(until, 0) {
					l.o.Log.Info("rate limiting back on Redis")
				}
				return d
			}
			if ctx.Err() != nil {
				// The caller went away; do not blame Redis.
				return Decision{Allowed: false, Limit: lim.Burst, RetryAfter: time.Second}
			}
			if !l.outage(err) {
				reason = slowAttr
			} else {
				next := time.Now().Add(l.o.FallbackFor).UnixNano()
				if l.downUntil.CompareAndSwap(until, next) && until == 0 {
					l.o.Log.Warn("Redis unreachable for rate limiting; limiting in process (per replica) until it answers",
						"error", err, "retry_every", l.o.FallbackFor)
				}
			}
			// Either way this request is decided in process, from the budget as Redis last
			// described it; a slow answer does not take the limiter off Redis.
		}
		l.fallback.Add(ctx, 1, reason)
	}
	return l.allowLocal(key, lim)
}

// outage tells a Redis that is down from one that is slow. Connection errors (refused, reset,
// closed) count, and connFailuresToOpen of them in a row mean down. A timeout means down only
// when Redis has not answered anything for FallbackFor: under load a whole pipeline of decisions
// can miss its deadline together while Redis is up and answering.
func (l *Limiter) outage(err error) bool {
	if isTimeout(err) {
		return time.Since(time.Unix(0, l.lastOK.Load())) > l.o.FallbackFor
	}
	return l.connFails.Add(1) >= connFailuresToOpen
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redis.ErrPoolTimeout) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// Refused reports whether this replica knows the budget key is spent (Redis refused it and the
// next token is not due yet), and for how long, without asking Redis or taking anything.
func (l *Limiter) Refused(key string, lim Limit) (time.Duration, bool) {
	b, ok := l.leases.Peek(budgetKey{key, lim})
	if !ok {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := time.Until(b.refusedTil); d > 0 {
		return d, true
	}
	return 0, false
}

// Unspent is the number of leased tokens this replica holds and has not spent yet, with those
// on their way to or from Redis.
func (l *Limiter) Unspent() int {
	l.holdMu.Lock()
	defer l.holdMu.Unlock()
	n := int(l.moving.Load())
	for b := range l.holding {
		b.mu.Lock()
		n += b.tokens
		b.mu.Unlock()
	}
	return n
}

// RedisCalls is the number of calls made to Redis so far (for benchmarks and tests).
func (l *Limiter) RedisCalls() int64 { return l.redisCalls.Load() }

func (l *Limiter) leaseOf(key string, lim Limit) *lease {
	bk := budgetKey{key, lim}
	if b, ok := l.leases.Get(bk); ok {
		return b
	}
	l.leaseMu.Lock()
	defer l.leaseMu.Unlock()
	b, ok := l.leases.Get(bk)
	if !ok {
		b = &lease{size: 1, remaining: -1}
		l.leases.Add(bk, b)
	}
	return b
}

// startFetch marks a lease request on its way (b.mu held).
func (b *lease) startFetch() {
	b.fetching = true
	b.landed = make(chan struct{})
}

// endFetch marks the lease request landed (or failed) and wakes those waiting for it (b.mu held).
func (b *lease) endFetch() {
	b.fetching = false
	if b.landed != nil {
		close(b.landed)
		b.landed = nil
	}
}

// allowRedis decides from the replica's lease when it can, else asks Redis for the next lease,
// or waits for the one already on its way. A decision from the lease sets no deadline. Waiting
// for others' lease requests has one deadline, the Redis decision timeout, however many it
// waits for: a request never waits longer for another's lease than for its own. A request
// whose wait ends with it asking (the request it waited for failed) gets the whole decision
// timeout for its own ask (askRedis): only Redis failing to answer it in that time makes it a
// Redis failure, decided in process and counted as a fallback, as for any other asker.
func (l *Limiter) allowRedis(ctx context.Context, key string, lim Limit) (Decision, error) {
	b := l.leaseOf(key, lim)
	var waitCtx context.Context // the deadline of waiting, set at the first wait
	waited := false
	defer func() {
		if waited {
			b.mu.Lock()
			b.waiting--
			b.mu.Unlock()
		}
	}()
	for {
		d, ask, giveBack, landed := l.fromLease(b, key, lim, waited)
		if landed != nil {
			if waitCtx == nil {
				var cancel context.CancelFunc
				waitCtx, cancel = context.WithTimeout(ctx, l.o.Timeout)
				defer cancel()
			}
			waited = true
			select {
			case <-landed:
				continue
			case <-waitCtx.Done():
				return Decision{}, waitCtx.Err()
			}
		}
		if ask == 0 {
			return d, nil
		}
		res, err := l.askRedis(ctx, key, lim, giveBack, ask)
		if err != nil {
			b.mu.Lock()
			b.endFetch() // a waiting request asks Redis itself next
			b.mu.Unlock()
			return Decision{}, err
		}
		return l.takeLease(b, key, lim, res), nil
	}
}

// fromLease decides from b alone when its lease has tokens or Redis refused it recently
// (ask = 0). When a lease request is on its way it returns the channel that closes when it
// lands, having counted the caller as waiting (waited: it already was). Else the caller is the
// one to ask Redis: it gets how many tokens to ask for (ask >= 1: its own, those of the requests
// waiting, and the lease) and how many unspent ones of an expired lease to give back first.
func (l *Limiter) fromLease(b *lease, key string, lim Limit, waited bool) (d Decision, ask, giveBack int, landed <-chan struct{}) {
	now := time.Now()
	b.mu.Lock()
	if b.tokens > 0 && now.Before(b.expires) {
		b.tokens--
		d := Decision{Allowed: true, Limit: lim.Burst, Remaining: b.remaining + b.tokens, ResetAfter: max(b.resetAt.Sub(now), 0)}
		// A lease being spent in time is refilled before it runs out, so no request waits
		// for Redis while the budget has room.
		refill := 0
		if b.size > 1 && !b.fetching && b.tokens <= b.size/4 && b.remaining >= 8 {
			b.size = min(b.size*2, l.o.MaxLease)
			refill = max(min(b.size, b.remaining/4), 1)
			b.startFetch()
		}
		b.mu.Unlock()
		if refill > 0 {
			go l.refill(key, lim, b, refill)
		}
		return d, 0, 0, nil
	}
	if now.Before(b.refusedTil) {
		d := Decision{Limit: lim.Burst, RetryAfter: b.refusedTil.Sub(now), ResetAfter: max(b.resetAt.Sub(now), 0)}
		b.mu.Unlock()
		return d, 0, 0, nil
	}
	if b.fetching {
		if !waited {
			b.waiting++
		}
		ch := b.landed
		b.mu.Unlock()
		return Decision{}, 0, 0, ch
	}
	others := b.waiting
	if waited {
		others-- // the caller itself is counted among those waiting
	}
	switch {
	case b.tokens > 0: // the last lease expired unspent: give the rest back, lease less
		giveBack, b.tokens = b.tokens, 0
		b.size = max(b.size/2, 1)
	case now.Before(b.expires): // the last lease was spent in time: lease more
		b.size = min(b.size*2, l.o.MaxLease)
	}
	ask = 1
	if b.remaining >= 0 {
		ask = max(min(b.size, b.remaining/4), 1)
	}
	// Tokens for the requests waiting are theirs at once, not a lease held for later: asking
	// for them is what each would have asked for alone, and Redis grants no more than it has.
	ask += max(others, 0)
	b.startFetch()
	b.mu.Unlock()
	return Decision{}, ask, giveBack, nil
}

// askRedis gives back giveBack unspent tokens, then asks for a lease of up to n, within the
// Redis decision timeout from now.
func (l *Limiter) askRedis(ctx context.Context, key string, lim Limit, giveBack, n int) (*redis_rate.Result, error) {
	rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	rl := gcra(lim)
	if giveBack > 0 {
		// A negative cost moves the budget's clock back by the unspent tokens. If that would
		// overfill the budget, Redis keeps it as it was (the tokens are lost, never doubled).
		l.countCall(ctx)
		if _, err := l.redis.AllowN(rctx, key, rl, -giveBack); err != nil {
			return nil, err
		}
	}
	l.countCall(ctx)
	if n == 1 {
		return l.redis.AllowN(rctx, key, rl, 1)
	}
	return l.redis.AllowAtMost(rctx, key, rl, n)
}

// takeLease records Redis's answer in b and decides this request from it.
func (l *Limiter) takeLease(b *lease, key string, lim Limit, res *redis_rate.Result) Decision {
	now := time.Now()
	b.mu.Lock()
	b.endFetch()
	b.remaining = max(res.Remaining, 0)
	b.resetAt = now.Add(max(res.ResetAfter, 0))
	b.answeredAt = now
	if res.Allowed <= 0 {
		retry := max(res.RetryAfter, 0)
		b.refusedTil = now.Add(retry)
		b.remaining = 0
		if b.tokens > 0 && now.Before(b.expires) {
			// A concurrent lease landed while this call was refused: spend it here rather
			// than leave it for the sweeper.
			b.tokens--
			d := Decision{Allowed: true, Limit: lim.Burst, Remaining: b.tokens, ResetAfter: max(res.ResetAfter, 0)}
			b.mu.Unlock()
			return d
		}
		b.mu.Unlock()
		return Decision{Limit: lim.Burst, RetryAfter: retry, ResetAfter: max(res.ResetAfter, 0)}
	}
	b.tokens += res.Allowed - 1
	b.expires = now.Add(l.o.LeaseTTL)
	d := Decision{Allowed: true, Limit: lim.Burst, Remaining: b.remaining + b.tokens, ResetAfter: max(res.ResetAfter, 0)}
	holds := b.tokens > 0
	b.mu.Unlock()
	l.hold(holds, b, key, lim)
	return d
}

// hold records that b may have unspent tokens, for Run to give back when its lease expires.
func (l *Limiter) hold(holds bool, b *lease, key string, lim Limit) {
	if holds {
		l.holdMu.Lock()
		l.holding[b] = budgetKey{key, lim}
		l.holdMu.Unlock()
	}
}

// gcra is lim as redis_rate takes it.
func gcra(lim Limit) redis_rate.Limit {
	return redis_rate.Limit{Rate: lim.Rate, Burst: lim.Burst, Period: time.Second}
}

// refill leases n more tokens for b in the background.
func (l *Limiter) refill(key string, lim Limit, b *lease, n int) {
	l.moving.Add(int64(n))
	defer l.moving.Add(-int64(n))
	ctx, cancel := context.WithTimeout(context.Background(), l.o.Timeout)
	defer cancel()
	l.countCall(ctx)
	res, err := l.redis.AllowAtMost(ctx, key, gcra(lim), n)
	now := time.Now()
	b.mu.Lock()
	b.endFetch()
	if err != nil { // the next request that finds the lease empty asks Redis itself
		b.mu.Unlock()
		return
	}
	b.remaining = max(res.Remaining, 0)
	b.resetAt = now.Add(max(res.ResetAfter, 0))
	b.answeredAt = now
	if res.Allowed > 0 {
		b.tokens += res.Allowed
		b.expires = now.Add(l.o.LeaseTTL)
	}
	holds := b.tokens > 0
	b.mu.Unlock()
	l.hold(holds, b, key, lim)
}

// Run gives the unspent tokens of expired leases back to Redis until ctx is done, so a
// replica whose traffic on a budget stops does not keep tokens another replica could use.
// Without it, a lease's leftovers go back on the budget's next request to this replica.
func (l *Limiter) Run(ctx context.Context) error {
	if l.redis == nil {
		<-ctx.Done()
		return nil
	}
	return lifecycle.Every(ctx, l.o.LeaseTTL, l.giveBackExpired)
}

func (l *Limiter) giveBackExpired(ctx context.Context) {
	type due struct {
		bk budgetKey
		n  int
	}
	var dues []due
	now := time.Now()
	l.holdMu.Lock()
	for b, bk := range l.holding {
		b.mu.Lock()
		switch {
		case b.tokens == 0:
			delete(l.holding, b)
		case !now.Before(b.expires):
			dues = append(dues, due{bk, b.tokens})
			b.tokens, b.size = 0, max(b.size/2, 1)
			delete(l.holding, b)
		}
		b.mu.Unlock()
	}
	l.holdMu.Unlock()
	for _, d := range dues {
		l.moving.Add(int64(d.n))
	}
	for _, d := range dues {
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		l.countCall(rctx)
		_, err := l.redis.AllowN(rctx, d.bk.key, gcra(d.bk.lim), -d.n)
		cancel()
		l.moving.Add(-int64(d.n))
		if err != nil && ctx.Err() == nil {
			l.o.Log.Debug("giving back unspent rate-limit tokens failed; they are lost until the budget refills", "error", err)
		}
	}
}

func (l *Limiter) countCall(ctx context.Context) {
	l.redisCalls.Add(1)
	l.calls.Add(ctx, 1)
}

// allowLocal decides in process. A budget's local bucket starts from what Redis last said of
// that budget (tokens left then, the replica's unspent lease, refilled at the rate since), and is
// started again from it whenever Redis has answered for the budget since the bucket was last
// used, so falling back never hands out a fresh burst.
func (l *Limiter) allowLocal(key string, lim Limit) Decision {
	name := key + "|" + strconv.Itoa(lim.Rate) + "|" + strconv.Itoa(lim.Burst)
	now := time.Now()
	l.localMu.Lock()
	lb, ok := l.local.Get(name)
	if !ok {
		lb = &localBucket{}
		l.local.Add(name, lb)
	}
	if lease, known := l.leases.Peek(budgetKey{key, lim}); known {
		lease.mu.Lock()
		if !lease.answeredAt.IsZero() && (lb.rl == nil || lease.answeredAt.After(lb.lastUsed)) {
			left := lease.remaining + lease.tokens
			if now.Before(lease.refusedTil) {
				left = 0
			}
			lb.rl = rate.NewLimiter(rate.Limit(lim.Rate), lim.Burst)
			lb.rl.ReserveN(lease.answeredAt, lim.Burst-min(max(left, 0), lim.Burst))
		}
		lease.mu.Unlock()
	}
	if lb.rl == nil { // nothing known of this budget: it starts full, as in Redis
		lb.rl = rate.NewLimiter(rate.Limit(lim.Rate), lim.Burst)
	}
	lb.lastUsed = now
	rl := lb.rl
	l.localMu.Unlock()
	r := rl.ReserveN(now, 1)
	d := Decision{Limit: lim.Burst, Local: true}
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
