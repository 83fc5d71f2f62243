package client

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
)

// Registry answers which of some names a registry holds; *Client satisfies it for pricing ids.
// KnownCache takes any: transfers checks intelligence's entity names through it too.
type Registry interface {
	Known(ctx context.Context, ids []string) (map[string]bool, error)
}

// KnownOptions configure a KnownCache; zero values take the defaults.
type KnownOptions struct {
	// KnownTTL is how long a known name is taken without asking again (default 10m): the
	// registry drops a name rarely, and a dropped one only matches nothing.
	KnownTTL time.Duration
	// UnknownTTL is how long an unknown one stays refused (default 30s): short, so a name the
	// registry just listed is soon found.
	UnknownTTL time.Duration
	// Timeout bounds one registry call (default 2s): past it the names are taken unchecked.
	Timeout time.Duration
	// Retry is how long after a failed call the registry is not asked again (default 5s): while
	// it is down, names are taken unchecked without waiting on it.
	Retry time.Duration
	// MaxEntries bounds the cache (default 100000): the names come from callers.
	MaxEntries int
	// Batch is the most names one registry call carries (default 1000: token-analytics'
	// MaxKnownIDs, intelligence's MaxBatch).
	Batch int
	// Native are names known without asking (NativePricingIDs for pricing ids).
	Native []string
	// Log reports, at most once a minute, that the registry could not be asked (default:
	// discard), with the message Warn.
	Log  *slog.Logger
	Warn string
	// Unchecked is called each time names are taken unchecked (a caller's counter; default none).
	Unchecked func(ctx context.Context)
	Now       func() time.Time
}

// NativePricingIDs are the chains' native pricing ids, which the token registry knows without
// being asked.
func NativePricingIDs() []string {
	var ids []string
	for _, c := range chains.All {
		if c.NativePricingID != "" {
			ids = append(ids, c.NativePricingID)
		}
	}
	return ids
}

// KnownCache checks names against a registry through a short cache, known answers kept longer
// than unknown ones. It fails open: when the registry cannot answer, the names it was asked
// about are taken unchecked (an unknown one then matches nothing), so an outage of the registry
// never refuses a caller's filter. Safe for concurrent use.
type KnownCache struct {
	reg    Registry
	o      KnownOptions
	native map[string]bool

	mu        sync.Mutex
	cache     map[string]knownEntry
	lastLog   time.Time
	downUntil time.Time // after a failed call: take names unchecked without asking until then
}

type knownEntry struct {
	known bool
	until time.Time
}

// NewKnownCache checks names against reg with o's defaults filled in.
func NewKnownCache(reg Registry, o KnownOptions) *KnownCache {
	o.KnownTTL = orDefault(o.KnownTTL, 10*time.Minute)
	o.UnknownTTL = orDefault(o.UnknownTTL, 30*time.Second)
	o.Timeout = orDefault(o.Timeout, 2*time.Second)
	o.Retry = orDefault(o.Retry, 5*time.Second)
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100000
	}
	if o.Batch <= 0 {
		o.Batch = 1000
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Warn == "" {
		o.Warn = "registry unavailable: names are taken unchecked"
	}
	if o.Unchecked == nil {
		o.Unchecked = func(context.Context) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	kc := &KnownCache{reg: reg, o: o, native: map[string]bool{}, cache: map[string]knownEntry{}}
	for _, n := range o.Native {
		kc.native[n] = true
	}
	return kc
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Unknown returns the first of ids (in their order) the registry does not know, "" when it
// knows them all. Ids the registry cannot be asked about are taken (fail open); only the
// caller's own cancellation is an error.
func (kc *KnownCache) Unknown(ctx context.Context, ids []string) (string, error) {
	now := kc.o.Now()
	answers, ask := kc.cached(ids, now)
	for start := 0; start < len(ask); start += kc.o.Batch {
		part := ask[start:min(start+kc.o.Batch, len(ask))]
		known, err := kc.ask(ctx, part, now)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			kc.failOpen(ctx, now, err)
			for _, id := range ask[start:] {
				answers[id] = true // unchecked: an unknown one matches nothing
			}
			break
		}
		kc.store(part, known, now)
		for _, id := range part {
			answers[id] = known[id]
		}
	}
	for _, id := range ids {
		if !answers[id] {
			return id, nil
		}
	}
	return "", nil
}

var errRegistryDown = errors.New("not asked: the last call failed")

// ask calls the registry within Timeout, unless a call failed less than Retry ago.
func (kc *KnownCache) ask(ctx context.Context, ids []string, now time.Time) (map[string]bool, error) {
	kc.mu.Lock()
	down := now.Before(kc.downUntil)
	kc.mu.Unlock()
	if down {
		return nil, errRegistryDown
	}
	cctx, cancel := context.WithTimeout(ctx, kc.o.Timeout)
	defer cancel()
	known, err := kc.reg.Known(cctx, ids)
	if err != nil && ctx.Err() == nil {
		kc.mu.Lock()
		kc.downUntil = now.Add(kc.o.Retry)
		kc.mu.Unlock()
	}
	return known, err
}

// cached answers the ids it can from the natives and the cache; ask is the rest, distinct and
// sorted.
func (kc *KnownCache) cached(ids []string, now time.Time) (answers map[string]bool, ask []string) {
	answers = make(map[string]bool, len(ids))
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for _, id := range ids {
		if _, seen := answers[id]; seen {
			continue
		}
		if kc.native[id] {
			answers[id] = true
			continue
		}
		if e, ok := kc.cache[id]; ok && now.Before(e.until) {
			answers[id] = e.known
			continue
		}
		answers[id] = false
		ask = append(ask, id)
	}
	sort.Strings(ask)
	return answers, ask
}

// store caches the registry's answer about ids, dropping expired entries (then, if still
// full, everything) when the cache is at its bound.
func (kc *KnownCache) store(ids []string, known map[string]bool, now time.Time) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	if len(kc.cache)+len(ids) > kc.o.MaxEntries {
		for id, e := range kc.cache {
			if !now.Before(e.until) {
				delete(kc.cache, id)
			}
		}
		if len(kc.cache)+len(ids) > kc.o.MaxEntries {
			clear(kc.cache)
		}
	}
	for _, id := range ids {
		ttl := kc.o.UnknownTTL
		if known[id] {
			ttl = kc.o.KnownTTL
		}
		kc.cache[id] = knownEntry{known: known[id], until: now.Add(ttl)}
	}
}

// failOpen reports names taken unchecked and logs why at most once a minute.
func (kc *KnownCache) failOpen(ctx context.Context, now time.Time, err error) {
	kc.o.Unchecked(ctx)
	kc.mu.Lock()
	quiet := !kc.lastLog.IsZero() && now.Sub(kc.lastLog) < time.Minute
	if !quiet {
		kc.lastLog = now
	}
	kc.mu.Unlock()
	if !quiet {
		kc.o.Log.Warn(kc.o.Warn, "err", err)
	}
}
