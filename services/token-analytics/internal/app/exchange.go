package app

import (
	"context"
	"time"
)

// MaxExchangeTokens is the most pricing ids each list of the operator's exchange tokens names.
const MaxExchangeTokens = 2000

// Exchange lists the tokens the operator's exchange lists, by pricing id, in the order the
// operator gave them.
type Exchange struct {
	Spot []string
	Perp []string
}

// ExchangeToken is one entry of /token/service_exchange_tokens: the registry's entry with its
// price now and 24 h ago (null when the service has none).
type ExchangeToken struct {
	Identifier  TokenIdentifier `json:"identifier"`
	Name        *string         `json:"name"`
	Symbol      *string         `json:"symbol"`
	TVTicker    *string         `json:"tvTicker"`
	Price       *float64        `json:"price"`
	Price24hAgo *float64        `json:"price24hAgo"`
	Deployments []Deployment    `json:"deployments"`
}

// ExchangeTokens is /token/service_exchange_tokens' answer.
type ExchangeTokens struct {
	SpotTokens []ExchangeToken `json:"spotTokens"`
	PerpTokens []ExchangeToken `json:"perpTokens"`
}

// ExchangeTokens returns the operator's exchange tokens the registry knows (an id it does not
// know is left out: the registry may not have imported it yet), read in one statement for the
// entries and one for the prices 24 h ago, whatever the lists' lengths.
func (s *Service) ExchangeTokens(ctx context.Context) (ExchangeTokens, error) {
	out := ExchangeTokens{SpotTokens: []ExchangeToken{}, PerpTokens: []ExchangeToken{}}
	ids := unique(s.o.Exchange.Spot, s.o.Exchange.Perp)
	if len(ids) == 0 {
		return out, nil
	}
	ts, err := s.st.Tokens(ctx, ids, s.o.Chains)
	if err != nil {
		return out, err
	}
	byID := make(map[string]Token, len(ts))
	for _, t := range ts {
		byID[t.PricingID] = t
	}
	ago, err := s.st.PricesInForce(ctx, present(ids, byID), s.o.Now().Add(-24*time.Hour))
	if err != nil {
		return out, err
	}
	list := func(ids []string) []ExchangeToken {
		l := make([]ExchangeToken, 0, len(ids))
		for _, id := range ids {
			if t, ok := byID[id]; ok {
				l = append(l, exchangeToken(t, ago))
			}
		}
		return l
	}
	out.SpotTokens, out.PerpTokens = list(s.o.Exchange.Spot), list(s.o.Exchange.Perp)
	return out, nil
}

func exchangeToken(t Token, ago map[string]float64) ExchangeToken {
	e := ExchangeToken{Identifier: TokenIdentifier{PricingID: t.PricingID}, Name: nonEmpty(t.Name),
		Symbol: nonEmpty(t.Symbol), TVTicker: nonEmpty(t.TVTicker), Price: t.Price,
		Deployments: t.Deployments}
	if e.Deployments == nil {
		e.Deployments = []Deployment{}
	}
	if p, ok := ago[t.PricingID]; ok {
		e.Price24hAgo = &p
	}
	return e
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// unique is the lists' ids, each once, in their first order.
func unique(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}
