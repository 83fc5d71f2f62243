package app

import (
	"context"
	"errors"

	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
	"github.com/chainintel/chainintel/services/transfers/internal/query"
)

// Tokens is the token registry the tokens filter's pricing ids are checked against
// (services/token-analytics/client satisfies it).
type Tokens interface {
	Market(ctx context.Context, pricingID string) (taclient.Market, error)
}

// WithTokens makes a pricing id the registry t does not know a 404 (API.md: unknown token).
// Without it every pricing id is taken, an unknown one matching nothing.
func WithTokens(t Tokens) Option { return func(a *App) { a.tokens = t } }

// checkTokens asks the registry about the pricing ids of a tokens filter. A contract address is
// never an error: transfers of a token the registry has not listed are still transfers.
func (a *App) checkTokens(ctx context.Context, ts []query.Token) error {
	if a.tokens == nil {
		return nil
	}
	for _, t := range ts {
		if t.PricingID == "" {
			continue
		}
		_, err := a.tokens.Market(ctx, t.PricingID)
		if errors.Is(err, taclient.ErrNotFound) {
			return notFound("token", "tokens: unknown token %q", t.PricingID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
