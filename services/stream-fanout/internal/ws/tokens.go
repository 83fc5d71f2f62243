package ws

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
)

// TokenRegistry answers which of some pricing ids the token registry (token-analytics) holds;
// services/token-analytics/client satisfies it, as it does for GET /transfers.
type TokenRegistry interface {
	Known(ctx context.Context, ids []string) (map[string]bool, error)
}

// TokenCheckOptions configure TokenCheck; zero values take the defaults, the ones
// GET /transfers uses (services/transfers app.TokenOptions).
type TokenCheckOptions struct {
	KnownTTL   time.Duration // a known pricing id is taken without asking again (default 10m)
	UnknownTTL time.Duration // an unknown one stays refused (default 30s): one just listed is soon found
	Timeout    time.Duration // one registry call (default 2s): past it the filter is taken unchecked
	Retry      time.Duration // after a failed call the registry is not asked (default 5s)
	MaxEntries int           // bound of the cache, whose ids come from callers (default 100,000)
	Log        *slog.Logger  // says, at most once a minute, that the registry could not be asked
	Now        func() time.Time
}

// TokenCheck refuses a filter's pricing id the token registry does not know, as GET /transfers
// does, through a short cache. It fails open: when the registry cannot answer, the filter is
// taken unchecked (an unknown pricing id then matches nothing), so an outage of token-analytics
// never refuses a subscribe. Contract addresses are not checked: a token the registry has not
// listed still moves.
type TokenCheck struct {
	reg    TokenRegistry
	o      TokenCheckOptions
	native map[string]bool // the chains' native pricing ids, known without asking

	mu        sync.Mutex
	cache     map[string]tokenEntry
	downUntil time.Time
	lastLog   time.Time
}

type tokenEntry struct {
	known bool
	until time.Time
}

// NewTokenCheck checks pricing ids against reg.
func NewTokenCheck(reg TokenRegistry, o TokenCheckOptions) *TokenCheck {
	o.KnownTTL = orDefault(o.KnownTTL, 10*time.Minute)
	o.UnknownTTL = orDefault(o.UnknownTTL, 30*time.Second)
	o.Timeout = orDefault(o.Timeout, 2*time.Second)
	o.Retry = orDefault(o.Retry, 5*time.Second)
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100_000
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	tc := &TokenCheck{reg: reg, o: o, native: map[string]bool{}, cache: map[string]tokenEntry{}}
	for _, c := range chains.All {
		if c.NativePricingID != "" {
			tc.native[c.NativePricingID] = true
		}
	}
	return tc
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// check refuses the first pricing id of ts the registry does not know with INVALID_FILTER in
// the words of GET /transfers (`tokens: unknown token "x"`). Only the caller's cancellation is
// another error.
func (tc *TokenCheck) check(ctx context.Context, ts []filter.Token) error {
	if tc == nil {
		return nil
	}
	var ids []string
	for _, t := range ts {
		if t.PricingID != "" {
			ids = append(ids, t.PricingID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	now := tc.o.Now()
	answers, ask := tc.cached(ids, now)
	if len(ask) > 0 {
		known, err := tc.ask(ctx, ask, now)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			tc.failOpen(now, err)
			for _, id := range ask {
				answers[id] = true // unchecked: an unknown one matches nothing
			}
		default:
			tc.store(ask, known, now)
			for _, id := range ask {
				answers[id] = known[id]
			}
		}
	}
	for _, id := range ids {
		if !answers[id] {
			return &filter.Error{Field: "tokens", Rule: "unknown token " + strconv.Quote(id)}
		}
	}
	return nil
}

// cached answers the ids it can from the natives and the cache; ask is the rest, distinct and
// sorted (a filter holds at most filter.MaxValues, within one registry call).
func (tc *TokenCheck) cached(ids []string, now time.Time) (answers map[string]bool, ask []string) {
	answers = make(map[string]bool, len(ids))
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, id := range ids {
		if _, seen := answers[id]; seen {
			continue
		}
		if e, ok := tc.cache[id]; tc.native[id] || ok && now.Before(e.until) {
			answers[id] = tc.native[id] || e.known
			continue
		}
		answers[id] = false
		ask = append(ask, id)
	}
	sort.Strings(ask)
	return answers, ask
}

var errTokensDown = errors.New("not asked: the last call failed")

// ask calls the registry within Timeout, unless a call failed less than Retry ago.
func (tc *TokenCheck) ask(ctx context.Context, ids []string, now time.Time) (map[string]bool, error) {
	tc.mu.Lock()
	down := now.Before(tc.downUntil)
	tc.mu.Unlock()
	if down {
		return nil, errTokensDown
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

// store caches the registry's answer about ids, dropping expired entries (then, if still full,
// everything) when the cache is at its bound.
func (tc *TokenCheck) store(ids []string, known map[string]bool, now time.Time) {
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

// failOpen logs, at most once a minute, that filters are taken unchecked.
func (tc *TokenCheck) failOpen(now time.Time, err error) {
	tc.mu.Lock()
	quiet := !tc.lastLog.IsZero() && now.Sub(tc.lastLog) < time.Minute
	if !quiet {
		tc.lastLog = now
	}
	tc.mu.Unlock()
	if !quiet {
		tc.o.Log.Warn("token registry unavailable: tokens filters are taken unchecked (an unknown pricing id matches nothing)", "err", err)
	}
}
