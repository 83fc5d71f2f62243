package store

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/risk_seeds.sql
	riskSeedsSQL string
	//go:embed sql/risk_categories_present.sql
	riskCategoriesPresentSQL string
	//go:embed sql/risk_hop_backward.sql
	riskHopBackwardSQL string
	//go:embed sql/risk_hop_forward.sql
	riskHopForwardSQL string
	//go:embed sql/risk_totals.sql
	riskTotalsSQL string
	//go:embed sql/risk_entity_addresses.sql
	riskEntityAddressesSQL string
)

// RiskMapping is the entity types and tag ids that make an address a risk seed, each with the
// category it is a seed of (parallel slices).
type RiskMapping struct {
	Types, TypeCategories []string
	Tags, TagCategories   []string
}

// RiskEdge is a pair read by a risk hop: Node is on the frontier, Next the address across the
// pair (its sender on a backward hop, its recipient on a forward one).
type RiskEdge struct {
	Node, Next string
	VolumeUSD  float64
}

// RiskHops reads one hop of a risk search in both directions in one round trip: the limit
// largest pairs into the backward frontier and out of the forward one (sql/risk_hop_*.sql),
// skipping the pairs of frontier addresses other than root with more than hubTransfers
// transfers. An empty frontier reads nothing.
func (s *Store) RiskHops(ctx context.Context, chainType, root string, backward, forward []string, limit int, hubTransfers int64) (back, fwd []RiskEdge, err error) {
	b := &pgx.Batch{}
	var outs []*[]RiskEdge
	for _, q := range []struct {
		sql      string
		frontier []string
		out      *[]RiskEdge
	}{{riskHopBackwardSQL, backward, &back}, {riskHopForwardSQL, forward, &fwd}} {
		if len(q.frontier) == 0 {
			continue
		}
		b.Queue(q.sql, chainType, q.frontier, limit, hubTransfers, root)
		outs = append(outs, q.out)
	}
	if len(outs) == 0 {
		return nil, nil, nil
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	for _, out := range outs {
		rows, err := br.Query()
		if err != nil {
			return nil, nil, fmt.Errorf("risk hop: %w", err)
		}
		var e RiskEdge
		if _, err := pgx.ForEachRow(rows, []any{&e.Node, &e.Next, &e.VolumeUSD}, func() error {
			*out = append(*out, e)
			return nil
		}); err != nil {
			return nil, nil, fmt.Errorf("risk hop: %w", err)
		}
	}
	return back, fwd, br.Close()
}

// RiskFacts is what a risk score reads once its search is done.
type RiskFacts struct {
	Seeds         map[string][]string // address → its categories, sorted
	Present       map[string]bool     // categories with at least one seed anywhere
	InUSD, OutUSD float64             // the root's received and sent USD over all its pairs
}

// RiskFacts reads, in one round trip, which of addrs (on chainType) are seeds of which
// categories, the categories with any seed at all, and root's received and sent USD.
func (s *Store) RiskFacts(ctx context.Context, chainType, root string, addrs []string, m RiskMapping) (RiskFacts, error) {
	f := RiskFacts{Seeds: map[string][]string{}, Present: map[string]bool{}}
	b := &pgx.Batch{}
	b.Queue(riskSeedsSQL, chainType, addrs, m.Types, m.TypeCategories, m.Tags, m.TagCategories)
	b.Queue(riskCategoriesPresentSQL, m.Types, m.TypeCategories, m.Tags, m.TagCategories)
	b.Queue(riskTotalsSQL, chainType, root)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return f, fmt.Errorf("risk seeds: %w", err)
	}
	var a, c string
	if _, err := pgx.ForEachRow(rows, []any{&a, &c}, func() error {
		f.Seeds[a] = append(f.Seeds[a], c)
		return nil
	}); err != nil {
		return f, fmt.Errorf("risk seeds: %w", err)
	}
	if rows, err = br.Query(); err != nil {
		return f, fmt.Errorf("risk categories: %w", err)
	}
	if _, err := pgx.ForEachRow(rows, []any{&c}, func() error {
		f.Present[c] = true
		return nil
	}); err != nil {
		return f, fmt.Errorf("risk categories: %w", err)
	}
	if err := br.QueryRow().Scan(&f.InUSD, &f.OutUSD); err != nil {
		return f, fmt.Errorf("risk totals: %w", err)
	}
	return f, br.Close()
}

// RiskEntityAddresses returns the limit busiest attributed addresses of operator entity id.
func (s *Store) RiskEntityAddresses(ctx context.Context, id string, limit int) ([]AddressKey, error) {
	rows, err := s.pool.Query(ctx, riskEntityAddressesSQL, id, limit)
	if err != nil {
		return nil, fmt.Errorf("risk addresses of %s: %w", id, err)
	}
	var out []AddressKey
	var k AddressKey
	if _, err := pgx.ForEachRow(rows, []any{&k.ChainType, &k.Address}, func() error {
		out = append(out, k)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("risk addresses of %s: %w", id, err)
	}
	return out, nil
}
