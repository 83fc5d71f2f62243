// Package cache is the edge's read-through cache: concurrent misses of a key share one load,
// the load has a deadline of its own, and its answer (and, if asked, its failure) is kept for a
// while. The key verifier, the credit ledger and the included-credits cache use it.
package cache

import (
	"context"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// Defaults of Options.
const (
	DefaultSize     = 100_000
	DefaultFailSize = 10_000
)

// Options tune a Loader.
type Options struct {
	// TTL is how long a loaded value is kept; 0 keeps none, and then the Loader only shares
	// concurrent loads of a key.
	TTL time.Duration
	// FailTTL is how long a load's error is kept, during which Get answers it without loading
	// again; 0 keeps no error. A value loaded later replaces it.
	FailTTL time.Duration
	// FailKeep, when set, picks the errors FailTTL keeps (the others are kept for no time): a
	// cache whose loads answer "no such thing" as an error keeps those apart from its values,
	// in their own FailSize, and not a failure to find out.
	FailKeep func(error) bool
	// Timeout bounds one load, whatever the callers' deadlines (0: no bound of its own). The
	// load is shared by every caller waiting on the key, so it runs detached from the context of
	// the caller that started it: one caller going away must not fail the others.
	Timeout time.Duration
	// Abandon lets a caller whose context ends stop waiting (it gets its context's error); the
	// load goes on for the others. Without it every caller waits for the load's answer.
	Abandon bool
	// Size and FailSize bound the values and errors kept (DefaultSize, DefaultFailSize); the
	// least recently used go first.
	Size, FailSize int
	// Now is the clock TTLs are measured on (time.Now).
	Now func() time.Time
}

// Loader is a read-through cache of values V under keys K. Safe for concurrent use.
type Loader[K comparable, V any] struct {
	o      Options
	flight func(K) string // names a key's shared load
	ok     *lru.Cache[K, kept[V]]
	failed *lru.Cache[K, kept[error]]
	loads  singleflight.Group
	// mu orders Forget against a load's store; gens holds, for each key with loads under way,
	// the number of Forgets so far, so a load started before a Forget does not keep its answer.
	mu   sync.Mutex
	gens map[K]*gen
	// joined, when set (tests), is called once a caller waits on a load.
	joined func()
}

// gen counts the Forgets of a key while loads of it run (loads of them).
type gen struct {
	n     uint64
	loads int
}

type kept[T any] struct {
	v       T
	expires time.Time
}

// New returns a Loader; flight names a key's shared load and must be one-to-one with keys.
func New[K comparable, V any](flight func(K) string, o Options) *Loader[K, V] {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	if o.FailSize <= 0 {
		o.FailSize = DefaultFailSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Loader[K, V]{o: o, flight: flight, gens: map[K]*gen{}}
	if o.TTL > 0 {
		c.ok, _ = lru.New[K, kept[V]](o.Size) // errs only on a size below 1
	}
	if o.FailTTL > 0 {
		c.failed, _ = lru.New[K, kept[error]](o.FailSize)
	}
	return c
}

// Cached is the value kept for k, without loading.
func (c *Loader[K, V]) Cached(k K) (V, bool) {
	return get(c.ok, k, c.o.Now())
}

// CachedErr is the error kept for k, without loading.
func (c *Loader[K, V]) CachedErr(k K) (error, bool) {
	return get(c.failed, k, c.o.Now())
}

// Forget drops what is kept for k (value or error). A load under way still answers its callers
// but keeps nothing, and the next Get of k loads again rather than join it: its answer may
// predate whatever the Forget reports (a revoke).
func (c *Loader[K, V]) Forget(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.gens[k]; ok {
		g.n++
	}
	c.loads.Forget(c.flight(k))
	if c.ok != nil {
		c.ok.Remove(k)
	}
	if c.failed != nil {
		c.failed.Remove(k)
	}
}

// begin registers a load of k and returns the generation it started in.
func (c *Loader[K, V]) begin(k K) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, ok := c.gens[k]
	if !ok {
		g = &gen{}
		c.gens[k] = g
	}
	g.loads++
	return g.n
}

// end unregisters a load of k started in generation n and reports whether no Forget came since;
// it returns with c.mu held, so that the caller's store is ordered before any later Forget.
func (c *Loader[K, V]) end(k K, n uint64) bool {
	c.mu.Lock()
	g := c.gens[k]
	current := g.n == n
	if g.loads--; g.loads == 0 {
		delete(c.gens, k)
	}
	return current
}

// Get answers the value kept for k, else the error kept for k, else the answer of load, which
// concurrent callers of the same key share. load gets a context detached from ctx and bounded by
// Timeout.
func (c *Loader[K, V]) Get(ctx context.Context, k K, load func(context.Context) (V, error)) (V, error) {
	now := c.o.Now()
	if v, ok := get(c.ok, k, now); ok {
		return v, nil
	}
	var zero V
	if err, ok := get(c.failed, k, now); ok {
		return zero, err
	}
	ch := c.loads.DoChan(c.flight(k), func() (any, error) {
		if v, ok := get(c.ok, k, c.o.Now()); ok { // a load that ended just before this one started
			return v, nil
		}
		return c.load(ctx, k, load)
	})
	if c.joined != nil {
		c.joined()
	}
	var done <-chan struct{}
	if c.o.Abandon {
		done = ctx.Done()
	}
	select {
	case res := <-ch:
		if res.Err != nil {
			return zero, res.Err
		}
		v, _ := res.Val.(V) // a nil interface when V is one
		return v, nil
	case <-done:
		return zero, ctx.Err()
	}
}

func (c *Loader[K, V]) load(ctx context.Context, k K, load func(context.Context) (V, error)) (V, error) {
	lctx, cancel := context.WithoutCancel(ctx), func() {}
	if c.o.Timeout > 0 {
		lctx, cancel = context.WithTimeout(lctx, c.o.Timeout)
	}
	defer cancel()
	n := c.begin(k)
	v, err := load(lctx)
	current := c.end(k, n)
	defer c.mu.Unlock()
	if !current {
		return v, err
	}
	now := c.o.Now()
	if err != nil {
		if c.failed != nil && (c.o.FailKeep == nil || c.o.FailKeep(err)) {
			c.failed.Add(k, kept[error]{err, now.Add(c.o.FailTTL)})
		}
		return v, err
	}
	if c.failed != nil {
		c.failed.Remove(k)
	}
	if c.ok != nil {
		c.ok.Add(k, kept[V]{v, now.Add(c.o.TTL)})
	}
	return v, nil
}

// get is what l keeps for k at now. An expired entry is left for the next Add to replace (or
// the LRU to drop): removing it here could drop a value a load has just added.
func get[K comparable, T any](l *lru.Cache[K, kept[T]], k K, now time.Time) (T, bool) {
	var zero T
	if l == nil {
		return zero, false
	}
	e, ok := l.Get(k)
	if !ok {
		return zero, false
	}
	if !now.Before(e.expires) {
		return zero, false
	}
	return e.v, true
}
