package metering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/usage"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"
)

// PeriodSource answers the credits an entity has used in a period from durable storage (the
// usage store); the ledger seeds Redis from it when Redis has no figure.
type PeriodSource interface {
	PeriodUsed(ctx context.Context, e usage.Entity, start time.Time) (int64, error)
}

// LedgerOptions tune a CreditLedger.
type LedgerOptions struct {
	// Sync is how often pending credits are added to Redis and totals re-read (default 250ms).
	Sync    time.Duration
	Timeout time.Duration // per Redis call (default 200ms)
	Log     *slog.Logger
	Now     func() time.Time
}

// CreditLedger keeps, per billed entity and billing period, the credits used so far, fast
// enough to answer on every request. The shared total lives in Redis (one counter per entity
// and period, seeded from the usage store when missing); each replica adds its calls to a local
// pending count and syncs it every Sync. A replica's view is therefore exact for its own calls
// and at most Sync behind for other replicas' — the credit-limit check may let a burst spread
// over replicas overshoot by that much. The usage store, fed by the metering consumer, stays the
// billing record. Safe for concurrent use.
type CreditLedger struct {
	rdb   redis.UniversalClient // nil: local only (seeded from the source)
	src   PeriodSource
	o     LedgerOptions
	mu    sync.Mutex
	byKey map[string]*ledgerEntry
	load  singleflight.Group
}

type ledgerEntry struct {
	entity  usage.Entity
	start   time.Time
	synced  int64 // last total read from Redis (or the source)
	pending int64 // added here, not yet in Redis
	flight  int64 // being added to Redis by a sync in progress
	used    time.Time
}

// NewCreditLedger returns a ledger; Run syncs it.
func NewCreditLedger(rdb redis.UniversalClient, src PeriodSource, o LedgerOptions) *CreditLedger {
	if o.Sync <= 0 {
		o.Sync = 250 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 200 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &CreditLedger{rdb: rdb, src: src, o: o, byKey: map[string]*ledgerEntry{}}
}

func redisKey(e usage.Entity, start time.Time) string {
	return "edge:credits:" + e.Type + ":" + e.ID + ":" + start.Format("2006-01")
}

// Used returns the credits e has used in the current period. The first call for an entity and
// period reads Redis (or the usage store); later calls answer from memory.
func (l *CreditLedger) Used(ctx context.Context, e usage.Entity) (int64, error) {
	start, _ := usage.PeriodOf(l.o.Now())
	k := redisKey(e, start)
	l.mu.Lock()
	if en := l.byKey[k]; en != nil {
		en.used = l.o.Now()
		v := en.synced + en.pending + en.flight
		l.mu.Unlock()
		return v, nil
	}
	l.mu.Unlock()
	_, err, _ := l.load.Do(k, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second) // shared by all waiters
		defer cancel()
		total, err := l.fetch(fctx, e, start, k)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.byKey[k] == nil {
			l.byKey[k] = &ledgerEntry{entity: e, start: start, synced: total, used: l.o.Now()}
		}
		l.mu.Unlock()
		return nil, nil
	})
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	en := l.byKey[k]
	return en.synced + en.pending + en.flight, nil
}

// Add records n credits used by e now and returns the period's total including them. Used must
// have been called for e in this period (it loads the entry); otherwise the total counts only
// this replica's calls until the next sync.
func (l *CreditLedger) Add(e usage.Entity, n int64) int64 {
	start, _ := usage.PeriodOf(l.o.Now())
	k := redisKey(e, start)
	l.mu.Lock()
	defer l.mu.Unlock()
	en := l.byKey[k]
	if en == nil {
		en = &ledgerEntry{entity: e, start: start, synced: -1}
		l.byKey[k] = en
	}
	en.pending += n
	en.used = l.o.Now()
	return max(en.synced, 0) + en.pending + en.flight
}

// AddExternal adds credits metered outside the edge's request path (stream transfers, counted
// by the metering consumer) straight to the shared total, when Redis holds one.
func (l *CreditLedger) AddExternal(ctx context.Context, e usage.Entity, at time.Time, n int64) error {
	if l.rdb == nil || n == 0 {
		return nil
	}
	start, _ := usage.PeriodOf(at)
	ctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
	defer cancel()
	if err := incrIfExists.Run(ctx, l.rdb, []string{redisKey(e, start)}, n).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("add stream credits: %w", err)
	}
	return nil
}

// fetch reads the shared total, seeding Redis from the source when it has none.
func (l *CreditLedger) fetch(ctx context.Context, e usage.Entity, start time.Time, k string) (int64, error) {
	if l.rdb != nil {
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		v, err := l.rdb.Get(rctx, k).Int64()
		cancel()
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, redis.Nil) {
			l.o.Log.Warn("credit ledger: Redis unavailable; using the usage store", "error", err)
		}
	}
	used, err := l.src.PeriodUsed(ctx, e, start)
	if err != nil {
		return 0, err
	}
	if l.rdb != nil {
		rctx, cancel := context.WithTimeout(ctx, l.o.Timeout)
		// Another replica may have seeded meanwhile: keep its figure.
		ok, err := l.rdb.SetNX(rctx, k, used, 40*24*time.Hour).Result()
		if err == nil && !ok {
			if v, err := l.rdb.Get(rctx, k).Int64(); err == nil {
				used = v
			}
		}
		cancel()
	}
	return used, nil
}

// incrIfExists adds to a counter only when it exists (a missing one is seeded from the usage
// store first, so a lost Redis never restarts a period at zero); it returns the new total or
// nil.
var incrIfExists = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 0 then return false end
return redis.call("INCRBY", KEYS[1], ARGV[1])`)

// Run syncs pending credits with Redis every Sync until ctx ends, then once more.
func (l *CreditLedger) Run(ctx context.Context) error {
	t := time.NewTicker(l.o.Sync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			l.Sync(fctx)
			cancel()
			return nil
		case <-t.C:
			l.Sync(ctx)
		}
	}
}

// Sync adds every entry's pending credits to Redis and re-reads the totals; entries idle for
// ten minutes and entries of past periods are dropped.
func (l *CreditLedger) Sync(ctx context.Context) {
	now := l.o.Now()
	start, _ := usage.PeriodOf(now)
	type job struct {
		k       string
		en      *ledgerEntry
		n       int64
		missing bool
	}
	var jobs []job
	l.mu.Lock()
	for k, en := range l.byKey {
		if en.pending == 0 && (now.Sub(en.used) > 10*time.Minute || en.start.Before(start)) {
			delete(l.byKey, k)
			continue
		}
		en.flight, en.pending = en.pending, 0
		jobs = append(jobs, job{k: k, en: en, n: en.flight})
	}
	l.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	if l.rdb == nil {
		l.mu.Lock()
		for _, j := range jobs {
			j.en.synced = max(j.en.synced, 0) + j.en.flight
			j.en.flight = 0
		}
		l.mu.Unlock()
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 4*l.o.Timeout)
	cmds := make([]*redis.Cmd, len(jobs))
	_, err := l.rdb.Pipelined(rctx, func(p redis.Pipeliner) error {
		for i, j := range jobs {
			// EVAL, not EVALSHA: in a pipeline a missing script cannot be retried per command,
			// and a restarted Redis has none. The body is short; Redis caches it compiled.
			cmds[i] = incrIfExists.Eval(rctx, p, []string{j.k}, j.n)
		}
		return nil
	})
	cancel()
	if err != nil && !errors.Is(err, redis.Nil) {
		// Keep the credits pending; they are added on a later sync.
		l.mu.Lock()
		for _, j := range jobs {
			j.en.pending += j.en.flight
			j.en.flight = 0
		}
		l.mu.Unlock()
		l.o.Log.Warn("credit ledger: Redis unavailable; credits kept pending", "error", err)
		return
	}
	l.mu.Lock()
	for i, j := range jobs {
		v, err := cmds[i].Int64()
		if err != nil { // missing counter: seed it, keep the credits pending
			jobs[i].missing = true
			j.en.pending += j.en.flight
		} else {
			j.en.synced = v
		}
		j.en.flight = 0
	}
	l.mu.Unlock()
	for _, j := range jobs {
		if !j.missing {
			continue
		}
		total, err := l.fetch(ctx, j.en.entity, j.en.start, j.k)
		if err != nil {
			l.o.Log.Warn("credit ledger: cannot seed period total", "entity", j.en.entity.Type+":"+j.en.entity.ID, "error", err)
			continue
		}
		l.mu.Lock()
		j.en.synced = total
		l.mu.Unlock()
	}
}
