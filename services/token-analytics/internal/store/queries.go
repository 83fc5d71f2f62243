package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// TopWindows returns every registry token deployed on chains (all when empty), or only ids when
// given, with its flows over [refFrom, curFrom) and [curFrom, curTo) and its prices.
func (s *Store) TopWindows(ctx context.Context, chains, ids []string, refFrom, curFrom, curTo time.Time) ([]app.TokenWindows, error) {
	var idArg any
	if len(ids) > 0 {
		idArg = ids
	}
	los, his, daily := pieces(refFrom, curFrom, curTo)
	rows, err := s.pool.Query(ctx, sqlTopWindows, nullChains(chains), refFrom, curFrom, curTo, idArg, los, his, daily)
	if err != nil {
		return nil, fmt.Errorf("top tokens: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.TokenWindows, error) {
		var w app.TokenWindows
		c, p := &w.Current, &w.Previous
		err := r.Scan(&w.PricingID, &w.Symbol, &w.MarketCap, &w.Stablecoin, &w.Price, &w.PrevPrice,
			&c.Volume, &c.CexIn, &c.CexOut, &c.DexIn, &c.DexOut, &p.Volume, &p.CexIn, &p.CexOut, &p.DexIn, &p.DexOut,
			&c.Transfers, &p.Transfers)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("top tokens: %w", err)
	}
	return out, nil
}

// TopParts returns every registry token deployed on chains (all when empty) with its flows over
// [refFrom, curFrom) and [curFrom, curTo) per chain of its deployments there, and its prices.
// Each token's Current and Previous are the sums of its parts, in chain order.
func (s *Store) TopParts(ctx context.Context, chains []string, refFrom, curFrom, curTo time.Time) ([]app.TokenParts, error) {
	los, his, daily := pieces(refFrom, curFrom, curTo)
	rows, err := s.pool.Query(ctx, sqlTopParts, nullChains(chains), refFrom, curFrom, curTo, los, his, daily)
	if err != nil {
		return nil, fmt.Errorf("top tokens per chain: %w", err)
	}
	var out []app.TokenParts
	var w app.TokenWindows
	var part app.ChainFlows
	c, p := &part.Current, &part.Previous
	_, err = pgx.ForEachRow(rows, []any{&w.PricingID, &w.Symbol, &w.MarketCap, &w.Stablecoin, &w.Price, &w.PrevPrice, &part.Chain,
		&c.Volume, &c.CexIn, &c.CexOut, &c.DexIn, &c.DexOut, &p.Volume, &p.CexIn, &p.CexOut, &p.DexIn, &p.DexOut,
		&c.Transfers, &p.Transfers}, func() error {
		if n := len(out); n == 0 || out[n-1].PricingID != w.PricingID {
			out = append(out, app.TokenParts{TokenWindows: w})
		}
		t := &out[len(out)-1]
		t.Parts = append(t.Parts, part)
		t.Current, t.Previous = t.Current.Add(part.Current), t.Previous.Add(part.Previous)
		w.MarketCap, w.Price, w.PrevPrice = nil, nil, nil // scanned into fresh pointers, never shared by two tokens
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("top tokens per chain: %w", err)
	}
	return out, nil
}

// pieces cuts [from, to) into whole UTC days (read from flow_days) and the hours before, after
// and around split (flow_hours), so that no piece straddles split: the windows on either side of
// it are summed from one row per token-day plus at most two days of hours per boundary.
func pieces(from, split, to time.Time) (los, his []time.Time, daily []bool) {
	add := func(lo, hi time.Time, d bool) {
		if lo.Before(hi) {
			los, his, daily = append(los, lo), append(his, hi), append(daily, d)
		}
	}
	firstDay, lastDay := ceilDay(from), to.UTC().Truncate(day)
	if !firstDay.Before(lastDay) {
		add(from, to, false)
		return los, his, daily
	}
	add(from, firstDay, false)
	splitDay := split.UTC().Truncate(day)
	switch {
	case splitDay.Before(firstDay) || !splitDay.Before(lastDay):
		add(firstDay, lastDay, true)
	case splitDay.Equal(split):
		add(firstDay, split, true)
		add(split, lastDay, true)
	default:
		add(firstDay, splitDay, true)
		add(splitDay, splitDay.Add(day), false)
		add(splitDay.Add(day), lastDay, true)
	}
	add(lastDay, to, false)
	return los, his, daily
}

const day = 24 * time.Hour

func ceilDay(t time.Time) time.Time {
	d := t.UTC().Truncate(day)
	if d.Before(t) {
		return d.Add(day)
	}
	return d
}

func deploymentArrays(deps []app.Deployment) (chains, tokens []string) {
	for _, d := range deps {
		chains, tokens = append(chains, d.Chain), append(tokens, d.Address)
	}
	return chains, tokens
}

// TopFlows returns the limit addresses with the most flow (in + out USD) of deps since from,
// exactly: the whole hours from the first one starting at or after from (kept sums are per such
// hour), and the transfers of from's hour at or after it when from is inside an hour.
func (s *Store) TopFlows(ctx context.Context, deps []app.Deployment, from time.Time, limit int) ([]app.AddressFlow, error) {
	chains, tokens := deploymentArrays(deps)
	from = from.UTC()
	whole := ceilHour(from)
	if s.tf != nil && !from.Before(s.FlowHorizon()) {
		if e := s.tf.ask(chains, tokens, whole, s.now()); e != nil {
			out, ok, err := s.topFlowsKept(ctx, e, from, limit)
			if err != nil || ok {
				return out, err
			}
		}
	}
	rows, err := s.pool.Query(ctx, sqlTopFlow, chains, tokens, whole, limit, app.ResidueTolerance, from)
	if err != nil {
		return nil, fmt.Errorf("top flows: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.AddressFlow, error) {
		var f app.AddressFlow
		var info []byte
		if err := r.Scan(&f.Chain, &f.Address, &f.InUSD, &f.InValue, &f.OutUSD, &f.OutValue, &info); err != nil {
			return f, err
		}
		if info != nil {
			f.Attribution = &app.AddressAttribution{}
			if err := json.Unmarshal(info, f.Attribution); err != nil {
				return f, err
			}
		}
		return f, nil
	})
	if err != nil {
		return nil, fmt.Errorf("top flows: %w", err)
	}
	return out, nil
}

// Volume returns deps' volume in buckets of size (aligned to a Monday 00:00 UTC) over [since,
// to), counting exactly the transfers from since on (the first bucket may start before it), only
// buckets with flows. Whole days are read from flow_days when size is whole days, the other
// whole hours from flow_hours, and since's hour, when since is inside it, from its transfers.
func (s *Store) Volume(ctx context.Context, deps []app.Deployment, since, to time.Time, size time.Duration) ([]app.VolumeBucket, error) {
	chains, tokens := deploymentArrays(deps)
	since = since.UTC()
	whole := ceilHour(since)
	days := to // no day rows: buckets of hours
	if size%day == 0 {
		if days = whole.Truncate(day); days.Before(whole) {
			days = days.Add(day)
		}
		days = minTime(days, to)
	}
	rows, err := s.pool.Query(ctx, sqlVolume, chains, tokens, whole, to, size, days, since)
	if err != nil {
		return nil, fmt.Errorf("token volume: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.VolumeBucket, error) {
		var b app.VolumeBucket
		err := r.Scan(&b.Time, &b.USD, &b.Value, &b.Transfers)
		b.Time = b.Time.UTC()
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("token volume: %w", err)
	}
	return out, nil
}

// TrendingIDs returns up to limit priced pricing ids deployed on chains, by 24 h volume.
func (s *Store) TrendingIDs(ctx context.Context, chains []string, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx, sqlTrending, nullChains(chains), limit)
	if err != nil {
		return nil, fmt.Errorf("trending: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("trending: %w", err)
	}
	return ids, nil
}

// Altcoins returns the limit largest non-stablecoin tokens other than exclude, with their
// current prices.
func (s *Store) Altcoins(ctx context.Context, exclude string, limit int) ([]app.AltcoinChange, error) {
	rows, err := s.pool.Query(ctx, sqlAltcoins, exclude, limit)
	if err != nil {
		return nil, fmt.Errorf("altcoins: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.AltcoinChange, error) {
		var a app.AltcoinChange
		err := r.Scan(&a.PricingID, &a.Now)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("altcoins: %w", err)
	}
	return out, nil
}

// ceilHour is the first hour starting at or after t.
func ceilHour(t time.Time) time.Time {
	h := t.Truncate(time.Hour)
	if h.Before(t) {
		h = h.Add(time.Hour)
	}
	return h
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
