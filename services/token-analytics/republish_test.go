package tokenanalytics

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/chainintel/chainintel/services/token-analytics/internal/events"
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

const usdc = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"

// ingestMarket is what ingest builds from the two topics read from their start (the rules of
// services/ingest/internal/market): deployment → pricing id, and the price in force at a time,
// the newest point at or before it if at most 48 h old.
type ingestMarket struct {
	mu     sync.Mutex
	ids    map[string]string
	points map[string]map[int64]float64
	got    map[string]int // records read, by topic
}

func (m *ingestMarket) priceAt(chain, address string, t time.Time) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best int64
	var p float64
	for ms, v := range m.points[m.ids[chain+"|"+address]] {
		if ms <= t.UnixMilli() && ms >= best {
			best, p = ms, v
		}
	}
	return p, best != 0 && t.Sub(time.UnixMilli(best)) <= 48*time.Hour
}

func (m *ingestMarket) consume(ctx context.Context, brokers []string) {
	tc := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "ingest.tokens", Topic: eventsv1.TopicMarketTokens, MaxWait: 20 * time.Millisecond},
		func() *eventsv1.MarketToken { return new(eventsv1.MarketToken) }, func(_ context.Context, b []eventbus.Message[*eventsv1.MarketToken]) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.got[eventsv1.TopicMarketTokens] += len(b)
			for _, r := range b {
				for _, d := range r.Msg.Deployments {
					m.ids[d.Chain+"|"+d.Address] = r.Msg.PricingId
				}
			}
			return nil
		})
	pc := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "ingest.prices", Topic: eventsv1.TopicPrices, MaxWait: 20 * time.Millisecond},
		func() *eventsv1.Price { return new(eventsv1.Price) }, func(_ context.Context, b []eventbus.Message[*eventsv1.Price]) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.got[eventsv1.TopicPrices] += len(b)
			for _, r := range b {
				if m.points[r.Msg.PricingId] == nil {
					m.points[r.Msg.PricingId] = map[int64]float64{}
				}
				m.points[r.Msg.PricingId][r.Msg.TimeMs] = r.Msg.Price
			}
			return nil
		})
	go func() { _ = tc.Run(ctx) }()
	go func() { _ = pc.Run(ctx) }()
}

// waitRelayed waits until the start's republish is committed, all of it relayed (the outbox
// records after before), and m has read as many records of each topic as were relayed: then
// nothing more is coming, and what a test checks is all there is, not what a loaded machine
// happened to deliver so far.
func (m *ingestMarket) waitRelayed(t *testing.T, pool *pgxpool.Pool, before int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var republished, unsent int
		if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM market.republished), (SELECT count(*) FROM market.outbox WHERE sent_at IS NULL)`).
			Scan(&republished, &unsent); err != nil {
			t.Fatal(err)
		}
		sent := map[string]int{}
		rows, err := pool.Query(context.Background(), `SELECT topic, count(*) FROM market.outbox WHERE id > $1 GROUP BY topic`, before)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var topic string
			var n int
			if err := rows.Scan(&topic, &n); err != nil {
				t.Fatal(err)
			}
			sent[topic] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		m.mu.Lock()
		read := maps.Clone(m.got)
		m.mu.Unlock()
		if republished > 0 && unsent == 0 && len(sent) == 2 &&
			read[eventsv1.TopicMarketTokens] >= sent[eventsv1.TopicMarketTokens] && read[eventsv1.TopicPrices] >= sent[eventsv1.TopicPrices] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: republished %d, %d unsent; relayed %v, read %v", republished, unsent, sent, read)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// After a restart against a broker that lost both topics (the local stack's in-memory broker,
// or a retention that expired), token-analytics' start publishes the registry and the prices in
// force over ingest's window again: a consumer reading from the start prices a transfer at the
// head and 47 hours before it, and gets a bounded number of points.
func TestStartRepublishesForAFreshTopic(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox, market.republished`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{
		{PricingID: "usd-coin", Symbol: "USDC", Deployments: []app.Deployment{{Chain: "ethereum", Address: usdc, Decimals: 6}}},
		{PricingID: "ethereum", Symbol: "ETH", Deployments: []app.Deployment{{Chain: "ethereum", Decimals: 18}}},
		{PricingID: "unpriced", Symbol: "UNP", Deployments: []app.Deployment{{Chain: "ethereum", Address: "0x01", Decimals: 18}}},
	}); err != nil {
		t.Fatal(err)
	}
	head := time.Now().UTC()
	hour := head.Truncate(time.Hour)
	var ps []app.PricePoint
	for h := 0; h < 24*30; h++ { // a month of hourly points, the newest at the head's hour
		ps = append(ps, app.PricePoint{PricingID: "usd-coin", Granularity: app.Hourly, Time: hour.Add(-time.Duration(h) * time.Hour), Price: 1 + float64(h)/1e4})
	}
	for d := 0; d < 90; d++ {
		at := head.Truncate(24 * time.Hour).Add(-time.Duration(d) * 24 * time.Hour)
		ps = append(ps, app.PricePoint{PricingID: "ethereum", Granularity: app.Daily, Time: at, Price: 3000 + float64(d)},
			app.PricePoint{PricingID: "usd-coin", Granularity: app.Daily, Time: at, Price: 1})
	}
	if _, err := st.AddPrices(ctx, ps); err != nil {
		t.Fatal(err)
	}
	// What the first life published is gone with its broker.
	if _, err := pool.Exec(ctx, `UPDATE market.outbox SET sent_at = now()`); err != nil {
		t.Fatal(err)
	}

	var before int64 // the newest outbox record of the first life
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM market.outbox`).Scan(&before); err != nil {
		t.Fatal(err)
	}

	brokers := kafkatest.Broker(t, eventsv1.TopicMarketTokens, eventsv1.TopicPrices)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	relay := events.NewRelay(st, pub, outbox.Options{PollInterval: 50 * time.Millisecond})
	go func() { _ = relay.Run(ctx) }()
	go republishLoop(ctx, st, Config{}, slog.New(slog.DiscardHandler))

	m := &ingestMarket{ids: map[string]string{}, points: map[string]map[int64]float64{}, got: map[string]int{}}
	m.consume(ctx, brokers)
	m.waitRelayed(t, pool, before)
	if p, _ := m.priceAt("ethereum", usdc, head); p != 1 {
		t.Errorf("USDC at the head: %v, want the head hour's 1", p)
	}
	if p, ok := m.priceAt("ethereum", usdc, head.Add(-47*time.Hour)); !ok || p != 1+47/1e4 {
		t.Errorf("USDC 47 h before the head: %v (%v), want %v", p, ok, 1+47/1e4)
	}
	if p, ok := m.priceAt("ethereum", "", head); !ok || p != 3000 {
		t.Errorf("ETH at the head: %v (%v), want today's 3000", p, ok)
	}
	// Bounded: per granularity the points after the window's start and the newest before it.
	m.mu.Lock()
	defer m.mu.Unlock()
	since := head.Add(-RepublishWindow).UnixMilli()
	for id, pts := range m.points {
		var older []int64
		for ms := range pts {
			if ms <= since {
				older = append(older, ms)
			}
		}
		sort.Slice(older, func(i, j int) bool { return older[i] < older[j] })
		if len(older) > 2 || len(pts) > 2*(store.RepublishMaxPoints+1) {
			t.Errorf("%s: %d points, %d of them before the window: %v", id, len(pts), len(older), older)
		}
	}
	if len(m.ids) != 3 {
		t.Errorf("registry: %v, want the 3 deployments", m.ids)
	}
}

// A periodic run is skipped when another replica republished within its interval.
func TestRepublishSkippedAfterAnotherReplicas(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `TRUNCATE market.tokens, market.deployments, market.prices, market.price_extremes, market.outbox, market.republished`); err != nil {
		t.Fatal(err)
	}
	st := store.New(pool)
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{{PricingID: "ethereum", Deployments: []app.Deployment{{Chain: "ethereum", Decimals: 18}}}}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	if _, err := st.AddPrices(ctx, []app.PricePoint{{PricingID: "ethereum", Granularity: app.Daily, Time: at.Truncate(24 * time.Hour), Price: 3000}}); err != nil {
		t.Fatal(err)
	}
	r, err := st.Republish(ctx, at.Add(-RepublishWindow), nil, time.Time{}, at)
	if err != nil || r != (store.Republished{Tokens: 1, Prices: 1}) {
		t.Fatalf("first: %+v, %v", r, err)
	}
	if r, err = st.Republish(ctx, at.Add(-RepublishWindow), nil, at.Add(-time.Hour), at.Add(time.Minute)); err != nil || !r.Skipped || !r.Last.Equal(at) {
		t.Errorf("within the interval: %+v, %v; want skipped, the other run at %s", r, err, at)
	}
	// The skipping replica runs next an interval after the other's run, not after its skip.
	if w := republishWait(r, at.Add(23*time.Hour), 24*time.Hour); w != time.Hour {
		t.Errorf("after a skip 23 h past the other run: next in %s, want 1h", w)
	}
	if r, err = st.Republish(ctx, at.Add(-RepublishWindow), nil, at.Add(time.Second), at.Add(24*time.Hour)); err != nil || r.Skipped || r.Prices != 1 {
		t.Errorf("after the interval: %+v, %v", r, err)
	}
}
