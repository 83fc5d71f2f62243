package ws

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/filter"
	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
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
// does, through services/token-analytics/client's KnownCache. It fails open: when the registry
// cannot answer, the filter is taken unchecked (an unknown pricing id then matches nothing), so
// an outage of token-analytics never refuses a subscribe. Contract addresses are not checked: a
// token the registry has not listed still moves.
type TokenCheck struct {
	kc *taclient.KnownCache
}

// NewTokenCheck checks pricing ids against reg; the chains' native pricing ids are known
// without asking.
func NewTokenCheck(reg TokenRegistry, o TokenCheckOptions) *TokenCheck {
	return &TokenCheck{kc: taclient.NewKnownCache(reg, taclient.KnownOptions{KnownTTL: o.KnownTTL,
		UnknownTTL: o.UnknownTTL, Timeout: o.Timeout, Retry: o.Retry, MaxEntries: o.MaxEntries,
		Native: taclient.NativePricingIDs(), Log: o.Log, Now: o.Now,
		Warn: "token registry unavailable: tokens filters are taken unchecked (an unknown pricing id matches nothing)"})}
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
	unknown, err := tc.kc.Unknown(ctx, ids)
	if err != nil {
		return err
	}
	if unknown != "" {
		return &filter.Error{Field: "tokens", Rule: "unknown token " + strconv.Quote(unknown)}
	}
	return nil
}
