package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Deployment is where a registry token lives: its contract on a chain ("" for a native coin).
type Deployment struct {
	Chain, Token string
	Decimals     int32
}

// MarketToken is a token registry entry.
type MarketToken struct {
	PricingID, Name, Symbol, TVTicker string
	Deployments                       []Deployment
}

// ApplyTokens stores registry entries (replacing each one's deployments) and deletes the
// pricing ids in deleted. Applying the same entries again changes nothing.
func (s *Store) ApplyTokens(ctx context.Context, ups []MarketToken, deleted []string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, id := range deleted {
			b.Queue(q("token_delete"), id)
		}
		for _, t := range ups {
			b.Queue(q("token_upsert"), t.PricingID, t.Name, t.Symbol, t.TVTicker)
			b.Queue(q("deployments_clear"), t.PricingID)
			var cs, ts, ids []string
			var ds []int32
			seen := map[[2]string]bool{}
			for _, d := range t.Deployments {
				if seen[[2]string{d.Chain, d.Token}] {
					continue
				}
				seen[[2]string{d.Chain, d.Token}] = true
				cs, ts, ids, ds = append(cs, d.Chain), append(ts, d.Token), append(ids, t.PricingID), append(ds, d.Decimals)
			}
			if len(cs) > 0 {
				b.Queue(q("deployments_insert"), cs, ts, ids, ds)
			}
		}
		if b.Len() == 0 {
			return nil
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

// PricePoint is a token's USD price at a time.
type PricePoint struct {
	PricingID string
	Time      time.Time
	Price     float64
}

// WritePrices stores price points; a point already stored is overwritten with the same value.
func (s *Store) WritePrices(ctx context.Context, ps []PricePoint) error {
	if len(ps) == 0 {
		return nil
	}
	type pk struct {
		id string
		t  int64
	}
	type dk struct {
		id  string
		day time.Time
	}
	points := map[pk]PricePoint{}
	closes := map[dk]PricePoint{}
	for _, p := range ps {
		points[pk{p.PricingID, p.Time.UnixMicro()}] = p
		k := dk{p.PricingID, Day(p.Time)}
		if c, ok := closes[k]; !ok || !p.Time.Before(c.Time) {
			closes[k] = p
		}
	}
	arrays := func(vals []PricePoint) ([]string, []time.Time, []float64) {
		ids, ts, vs := make([]string, len(vals)), make([]time.Time, len(vals)), make([]float64, len(vals))
		for i, p := range vals {
			ids[i], ts[i], vs[i] = p.PricingID, p.Time, p.Price
		}
		return ids, ts, vs
	}
	all := make([]PricePoint, 0, len(points))
	for _, p := range points {
		all = append(all, p)
	}
	days := make([]PricePoint, 0, len(closes))
	for _, p := range closes {
		days = append(days, p)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		i1, t1, v1 := arrays(all)
		b.Queue(q("prices_insert"), i1, t1, v1)
		i2, t2, v2 := arrays(days)
		b.Queue(q("price_days_upsert"), i2, t2, v2)
		return tx.SendBatch(ctx, b).Close()
	})
}
