package app

import (
	"context"
	"log/slog"
	"time"

	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
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

// WithTokens makes a pricing id the registry t does not know a 404 (API.md: unknown token).
// Without it every pricing id is taken, an unknown one matching nothing.
func WithTokens(t Tokens, o TokenOptions) Option {
	kc := newChecker(t, o, taclient.NativePricingIDs(), checkerNames{metric: "transfers_token_checks_unchecked_total",
		desc: "tokens filters taken unchecked because the token registry could not be asked",
		warn: "token registry unavailable: tokens filters are answered unchecked (an unknown pricing id matches nothing)"})
	return func(a *App) { a.tokens = kc }
}

// newChecker returns a check against reg (taclient.KnownCache: a short cache that fails open,
// so an outage of token-analytics or intelligence never fails a transfers query) that counts
// the filters it takes unchecked.
func newChecker(reg Tokens, o CheckOptions, native []string, n checkerNames) *taclient.KnownCache {
	if o.Meter == nil {
		o.Meter = noop.NewMeterProvider().Meter("transfers")
	}
	unchecked, _ := o.Meter.Int64Counter(n.metric, metric.WithDescription(n.desc))
	// At 0 from the start: increase() over a series born with its first event sees no increase.
	unchecked.Add(context.Background(), 0)
	return taclient.NewKnownCache(reg, taclient.KnownOptions{KnownTTL: o.KnownTTL, UnknownTTL: o.UnknownTTL,
		Timeout: o.Timeout, Retry: o.Retry, MaxEntries: o.MaxEntries, Native: native, Log: o.Log, Warn: n.warn,
		Unchecked: func(ctx context.Context) { unchecked.Add(ctx, 1) }, Now: o.Now})
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
	unknown, err := a.tokens.Unknown(ctx, ids)
	if err != nil {
		return err
	}
	if unknown != "" {
		return notFound("token", "tokens: unknown token %q", unknown)
	}
	return nil
}
