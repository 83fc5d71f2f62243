package app

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Tokens is the token registry the tokens filter's pricing ids are checked against
// (services/token-analytics/client satisfies it): Known answers which of ids it holds.
type Tokens interface {
	Known(ctx context.Context, ids []string) (map[string]bool, error)
}

// CheckOptions configure a check of names against another service's registry: pricing ids
// against token-analytics (WithTokens), entity ids and types against intelligence (WithEntities).
// Zero values take the defaults.
type CheckOptions struct {
	// KnownTTL is how long a known name is taken without asking again (default 10m): the
	// registry drops a name rarely, and a dropped one only matches nothing.
	KnownTTL time.Duration
	// UnknownTTL is how long an unknown one stays a 404 (default 30s): short, so a name the
	// registry just listed is soon found.
	UnknownTTL time.Duration
	// MaxEntries bounds the cache (default 100000): the ids come from callers, the public
	// histogram's included.
	MaxEntries int
	// Timeout bounds one registry call (default 2s): past it the filter is taken unchecked.
	Timeout time.Duration
	// Retry is how long after a failed call the registry is not asked again (default 5s): while
	// it is down, filters are taken unchecked without waiting on it.
	Retry time.Duration
	// Log reports, at most once a minute, that the registry could not be asked (default: discard).
	Log *slog.Logger
	// Meter counts the filters answered unchecked (default: none).
	Meter metric.Meter
	Now   func() time.Time
}

// TokenOptions configure the check of pricing ids.
type TokenOptions = CheckOptions

// checkerNames are what one registry check calls its metric and its log line.
type checkerNames struct {
	metric, desc, warn string
}

// registryChecker checks names against a registry through a short cache, and fails open: when
// the registry cannot answer, the filter is taken unchecked (an unknown name then matches
// nothing), so an outage of token-analytics or intelligence never fails a transfers query.
type registryChecker struct {
	reg       Tokens // Known: which of some names the registry holds
	o         CheckOptions
	names     checkerNames
	native    map[string]bool // names known without asking (the chains' native pricing ids)
	unchecked metric.Int64Counter

	mu        sync.Mutex
	cache     map[string]tokenEntry
	lastLog   time.Time
	downUntil time.Time // after a failed call: take filters unchecked without asking until then
}

type tokenEntry struct {
	known bool
	until time.Time
}

// knownBatch is the most ids one registry call carries (token-analytics' MaxKnownIDs,
// intelligence's MaxBatch).
const knownBatch = 1000

// WithTokens makes a pricing id the registry t does not know a 404 (API.md: unknown token).
// Without it every pricing id is taken, an unknown one matching nothing.
func WithTokens(t Tokens, o TokenOptions) Option {
	tc := newChecker(t, o, checkerNames{metric: "transfers_token_checks_unchecked_total",
		desc: "tokens filters taken unchecked because the token registry could not be asked",
		warn: "token registry unavailable: tokens filters are answered unchecked (an unknown pricing id matches nothing)"})
	for _, c := range chains.All {
		if c.NativePricingID != "" {
			tc.native[c.NativePricingID] = true
		}
	}
	return func(a *App) { a.tokens = tc }
}

// newChecker returns a check against reg with o's defaults filled in.
func newChecker(reg Tokens, o CheckOptions, n checkerNames) *registryChecker {
	if o.KnownTTL <= 0 {
		o.KnownTTL = 10 * time.Minute
	}
	if o.UnknownTTL <= 0 {
		o.UnknownTTL = 30 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Retry <= 0 {
		o.Retry = 5 * time.Second
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100000
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Meter == nil {
		o.Meter = noop.NewMeterProvider().Meter("transfers")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	rc := &registryChecker{reg: reg, o: o, names: n, native: map[string]bool{}, cache: map[string]tokenEntry{}}
	rc.unchecked, _ = o.Meter.Int64Counter(n.metric, metric.WithDescription(n.desc))
	return rc
}

// checkTokens asks the registry about the pricing ids of a tokens filter, all in one call. A
// contract address is never an error: transfers of a token the registry has not listed are
// still transfers.
func (a *App) checkTokens(ctx context.Context, ts []query.Token) error {
	if a.tokens == nil {
		return nil
	}
	var ids []string
	for _, t := range ts {
		if t.PricingID != "" {
			ids = append(ids, t.PricingID)
		}
	}
	unknown, err := a.tokens.unknown(ctx, ids)
	if err != nil {
		return err
	}
	if unknown != "" {
		return notFound("token", "tokens: unknown token %q", unknown)
	}
	return nil
}

// unknown returns the first of ids (in their order) the registry does not know, "" when it
// knows them all. Ids the registry cannot be asked about are taken (fail open); only the
// caller's own cancellation is an error.
func (tc *registryChecker) unknown(ctx context.Context, ids []string) (string, error) {
	now := tc.o.Now()
	answers, ask := tc.cached(ids, now)
	for start := 0; start < len(ask); start += knownBatch {
		part := ask[start:min(start+knownBatch, len(ask))]
		known, err := tc.ask(ctx, part, now)
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			tc.failOpen(ctx, now, err)
			for _, id := range ask[start:] {
				answers[id] = true // unchecked: an unknown one matches nothing
			}
			break
		}
		tc.store(part, known, now)
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
func (tc *registryChecker) ask(ctx context.Context, ids []string, now time.Time) (map[string]bool, error) {
	tc.mu.Lock()
	down := now.Before(tc.downUntil)
	tc.mu.Unlock()
	if down {
		return nil, errRegistryDown
	}
	cctx, cancel := context.WithTimeout(ctx, tc.o.Timeout)
	defer cancel()
	known, err := tc.reg.Known(cctx, ids)
	if err != nil && ctx.Err() == nil {
		tc.mu.Lock()
		tc.downUntil = now.Add(tc.o.Retry)
		tc.mu.Unlock()
	}
	return known, err
}

// cached answers the ids it can from the natives and the cache; ask is the rest, distinct and
// sorted.
func (tc *registryChecker) cached(ids []string, now time.Time) (answers map[string]bool, ask []string) {
	answers = make(map[string]bool, len(ids))
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, id := range ids {
		if _, seen := answers[id]; seen {
			continue
		}
		if tc.native[id] {
			answers[id] = true
			continue
		}
		if e, ok := tc.cache[id]; ok && now.Before(e.until) {
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
func (tc *registryChecker) store(ids []string, known map[string]bool, now time.Time) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if len(tc.cache)+len(ids) > tc.o.MaxEntries {
		for id, e := range tc.cache {
			if !now.Before(e.until) {
				delete(tc.cache, id)
			}
		}
		if len(tc.cache)+len(ids) > tc.o.MaxEntries {
			clear(tc.cache)
		}
	}
	for _, id := range ids {
		ttl := tc.o.UnknownTTL
		if known[id] {
			ttl = tc.o.KnownTTL
		}
		tc.cache[id] = tokenEntry{known: known[id], until: now.Add(ttl)}
	}
}

// failOpen counts a filter taken unchecked and logs why at most once a minute.
func (tc *registryChecker) failOpen(ctx context.Context, now time.Time, err error) {
	tc.unchecked.Add(ctx, 1)
	tc.mu.Lock()
	quiet := !tc.lastLog.IsZero() && now.Sub(tc.lastLog) < time.Minute
	if !quiet {
		tc.lastLog = now
	}
	tc.mu.Unlock()
	if !quiet {
		tc.o.Log.Warn(tc.names.warn, "err", err)
	}
}
