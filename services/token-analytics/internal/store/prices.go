package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
)

// AddPrices stores daily and hourly points (keeping each pricing id's stored extremes, see
// upsertHistory), records the newest point of each pricing id as its quote (ticks only do that;
// a point already stored counts too, so importing the same history again repairs a quote), and
// enqueues a market.prices.v1 record of every point that is new or changed and of every tick.
// It returns how many history points were new or changed.
func (s *Store) AddPrices(ctx context.Context, ps []app.PricePoint) (int, error) {
	var n int
	err := s.write(ctx, "add prices", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, sqlPricesLock); err != nil {
			return false, err
		}
		var ids []string
		var grans []int16
		var times []time.Time
		var prices []float64
		var caps, vols []*float64
		var ticks []app.PricePoint
		for _, p := range ps {
			if p.Granularity == app.Tick {
				ticks = append(ticks, p)
				continue
			}
			ids, grans, times = append(ids, p.PricingID), append(grans, int16(p.Granularity)), append(times, p.Time.UTC())
			prices, caps, vols = append(prices, p.Price), append(caps, p.MarketCap), append(vols, p.Volume)
		}
		changed, err := upsertHistory(ctx, tx, historyBatch{ids, grans, times, prices, caps, vols})
		if err != nil {
			return false, err
		}
		n = len(changed)
		out := append(changed, ticks...)
		if err := quotes(ctx, tx, ps); err != nil {
			return false, err
		}
		return len(out) > 0, enqueuePrices(ctx, tx, out)
	})
	return n, err
}

// historyBatch is a write's daily and hourly points, as the statements' arrays.
type historyBatch struct {
	ids    []string
	grans  []int16
	times  []time.Time
	prices []float64
	caps   []*float64
	vols   []*float64
}

// upsertHistory stores a batch of history points and keeps market.price_extremes: it widens
// the extremes of the batch's pricing ids first (locking their rows, so writers of one pricing
// id follow each other), stores the points, and recomputes from history the extremes of the
// ids where a point holding the stored high was replaced by a lower price or one holding the
// stored low by a higher one. It returns the points that are new or changed.
func upsertHistory(ctx context.Context, tx pgx.Tx, b historyBatch) ([]app.PricePoint, error) {
	if len(b.ids) == 0 {
		return nil, nil
	}
	if _, err := tx.Exec(ctx, sqlPriceExtremesWiden, b.ids, b.prices); err != nil {
		return nil, fmt.Errorf("widen price extremes: %w", err)
	}
	rows, err := tx.Query(ctx, sqlPricesUpsert, b.ids, b.grans, b.times, b.prices, b.caps, b.vols)
	if err != nil {
		return nil, err
	}
	narrowed := map[string]bool{}
	changed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.PricePoint, error) {
		var p app.PricePoint
		var g int16
		var narrows bool
		err := r.Scan(&p.PricingID, &g, &p.Time, &p.Price, &p.MarketCap, &p.Volume, &narrows)
		p.Granularity = app.Granularity(g)
		if narrows {
			narrowed[p.PricingID] = true
		}
		return p, err
	})
	if err != nil {
		return nil, err
	}
	if len(narrowed) > 0 {
		ids := make([]string, 0, len(narrowed))
		for id := range narrowed {
			ids = append(ids, id)
		}
		if _, err := tx.Exec(ctx, sqlPriceExtremesRecompute, ids); err != nil {
			return nil, fmt.Errorf("recompute price extremes: %w", err)
		}
	}
	return changed, nil
}

// quotes records the newest point per pricing id as its current price, market cap and 24 h
// volume (a CoinGecko point's total_volume is the rolling 24 h volume at its time, a live
// quote's too).
func quotes(ctx context.Context, tx pgx.Tx, ps []app.PricePoint) error {
	newest := map[string]app.PricePoint{}
	for _, p := range ps {
		if q, ok := newest[p.PricingID]; !ok || !p.Time.Before(q.Time) {
			newest[p.PricingID] = p
		}
	}
	// In pricing-id order, so two writers quoting the same tokens lock their registry rows in
	// one order and cannot deadlock.
	ids := make([]string, 0, len(newest))
	for id := range newest {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	b := &pgx.Batch{}
	for _, id := range ids {
		p := newest[id]
		b.Queue(sqlTokenQuote, p.PricingID, p.Price, p.Time.UTC(), p.MarketCap, p.Volume)
	}
	return tx.SendBatch(ctx, b).Close()
}

func enqueuePrices(ctx context.Context, tx pgx.Tx, ps []app.PricePoint) error {
	if len(ps) == 0 {
		return nil
	}
	keys := make([]string, len(ps))
	payloads := make([][]byte, len(ps))
	for i, p := range ps {
		b, err := proto.Marshal(PriceRecord(p))
		if err != nil {
			return fmt.Errorf("encode price: %w", err)
		}
		keys[i], payloads[i] = p.PricingID, b
	}
	if _, err := tx.Exec(ctx, sqlOutboxInsert, eventsv1.TopicPrices, keys, payloads); err != nil {
		return fmt.Errorf("write outbox: %w", err)
	}
	return nil
}

// PriceRecord is the market.prices.v1 record of a point.
func PriceRecord(p app.PricePoint) *eventsv1.Price {
	return &eventsv1.Price{PricingId: p.PricingID, TimeMs: p.Time.UnixMilli(), Price: p.Price, MarketCap: p.MarketCap,
		Volume: p.Volume, Granularity: eventsv1.PriceGranularity(p.Granularity)}
}

// LatestPriceTime is the time of a pricing id's newest point of a granularity (zero if none).
func (s *Store) LatestPriceTime(ctx context.Context, id string, g app.Granularity) (time.Time, error) {
	var t *time.Time
	if err := s.pool.QueryRow(ctx, sqlPriceLatestTime, id, int16(g)).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("latest price of %s: %w", id, err)
	}
	if t == nil {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}

// PriceAt is a pricing id's newest point of a granularity at or before t.
func (s *Store) PriceAt(ctx context.Context, id string, g app.Granularity, t time.Time) (float64, bool, error) {
	var p float64
	err := s.pool.QueryRow(ctx, sqlPriceAt, id, int16(g), t).Scan(&p)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("price of %s at %s: %w", id, t, err)
	}
	return p, true, nil
}

// PriceInForce is the price in force at t: a pricing id's newest point of any granularity at
// or before t.
func (s *Store) PriceInForce(ctx context.Context, id string, t time.Time) (float64, bool, error) {
	ps, err := s.PricesInForce(ctx, []string{id}, t)
	if err != nil {
		return 0, false, err
	}
	p, ok := ps[id]
	return p, ok, nil
}

// PricesInForce is the price in force at t of each of ids that has one, in one statement.
func (s *Store) PricesInForce(ctx context.Context, ids []string, t time.Time) (map[string]float64, error) {
	out := map[string]float64{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlPriceInForce, ids, t)
	if err != nil {
		return nil, fmt.Errorf("prices at %s: %w", t, err)
	}
	var id string
	var p float64
	_, err = pgx.ForEachRow(rows, []any{&id, &p}, func() error {
		out[id] = p
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prices at %s: %w", t, err)
	}
	return out, nil
}

// PriceWindow returns the points of each of ids with from <= time <= to, oldest first, one per
// time (of two at the same time the hourly one, as PricesInForce takes it); ids without any are
// absent. One statement, whatever the number of ids.
func (s *Store) PriceWindow(ctx context.Context, ids []string, from, to time.Time) (map[string][]app.WindowPoint, error) {
	out := map[string][]app.WindowPoint{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlPricesWindow, ids, from, to)
	if err != nil {
		return nil, fmt.Errorf("prices from %s to %s: %w", from, to, err)
	}
	var id string
	var t time.Time
	var p float64
	_, err = pgx.ForEachRow(rows, []any{&id, &t, &p}, func() error {
		out[id] = append(out[id], app.WindowPoint{TimeMs: t.UnixMilli(), Price: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prices from %s to %s: %w", from, to, err)
	}
	return out, nil
}

// PriceExtremes returns the highest and lowest stored history price of each of ids that has
// history.
func (s *Store) PriceExtremes(ctx context.Context, ids []string) (map[string]app.Extremes, error) {
	out := map[string]app.Extremes{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlPriceExtremes, ids)
	if err != nil {
		return nil, fmt.Errorf("read price extremes: %w", err)
	}
	var id string
	var e app.Extremes
	_, err = pgx.ForEachRow(rows, []any{&id, &e.High, &e.Low}, func() error {
		out[id] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read price extremes: %w", err)
	}
	return out, nil
}

// Prices returns a pricing id's points of a granularity in [from, to], oldest first.
func (s *Store) Prices(ctx context.Context, id string, g app.Granularity, from, to time.Time) ([]app.PricePoint, error) {
	rows, err := s.pool.Query(ctx, sqlPricesRange, id, int16(g), from, to)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.PricePoint, error) {
		p := app.PricePoint{PricingID: id, Granularity: g}
		err := r.Scan(&p.Time, &p.Price)
		p.Time = p.Time.UTC()
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	return out, nil
}
