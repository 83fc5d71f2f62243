package events

import (
	"context"
	"os"
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
	"github.com/chainintel/chainintel/services/token-analytics/internal/store"
	"github.com/chainintel/chainintel/services/token-analytics/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

// TestRelayPublishesRegistryAndPrices writes registry entries and prices and reads them back
// from the in-process broker with the shapes and keys other services consume.
func TestRelayPublishesRegistryAndPrices(t *testing.T) {
	brokers := kafkatest.Broker(t, eventsv1.TopicMarketTokens, eventsv1.TopicPrices)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	pool := pgtest.Pool(t)
	st := store.New(pool)
	var before int64 // outbox records of other tests
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM market.outbox`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	relay := NewRelay(st, pub, outbox.Options{PollInterval: 50 * time.Millisecond})
	go func() { _ = relay.Run(ctx) }()

	mc := 3e11
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{{PricingID: "ethereum", Name: "Ethereum", Symbol: "ETH", MarketCap: &mc,
		Deployments: []app.Deployment{{Chain: "base", Decimals: 18}, {Chain: "ethereum", Decimals: 18}}}}); err != nil {
		t.Fatal(err)
	}
	// The same entry again publishes nothing more.
	if err := st.UpsertTokens(ctx, []app.TokenUpdate{{PricingID: "ethereum", Name: "Ethereum"}}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	if _, err := st.AddPrices(ctx, []app.PricePoint{{PricingID: "ethereum", Granularity: app.Daily, Time: at, Price: 3000},
		{PricingID: "ethereum", Granularity: app.Hourly, Time: at, Price: 3000}}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var tokens []eventbus.Message[*eventsv1.MarketToken]
	var prices []eventbus.Message[*eventsv1.Price]
	tc := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "t.tokens", Topic: eventsv1.TopicMarketTokens, MaxWait: 20 * time.Millisecond},
		func() *eventsv1.MarketToken { return new(eventsv1.MarketToken) }, func(_ context.Context, b []eventbus.Message[*eventsv1.MarketToken]) error {
			mu.Lock()
			defer mu.Unlock()
			tokens = append(tokens, b...)
			return nil
		})
	pc := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "t.prices", Topic: eventsv1.TopicPrices, MaxWait: 20 * time.Millisecond},
		func() *eventsv1.Price { return new(eventsv1.Price) }, func(_ context.Context, b []eventbus.Message[*eventsv1.Price]) error {
			mu.Lock()
			defer mu.Unlock()
			prices = append(prices, b...)
			return nil
		})
	go func() { _ = tc.Run(ctx) }()
	go func() { _ = pc.Run(ctx) }()
	// Until the writes' outbox is all relayed and read back: then nothing more is coming (what
	// is checked is all there is, however slowly a loaded machine delivered it). The writes must
	// have asked for one registry record (the repeated entry for none) and two prices.
	var queued map[string]int
	deadline := time.Now().Add(30 * time.Second)
	for {
		var unsent int
		queued, unsent = outboxAfter(t, pool, before)
		mu.Lock()
		done := unsent == 0 && len(tokens) >= queued[eventsv1.TopicMarketTokens] && len(prices) >= queued[eventsv1.TopicPrices]
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read %d registry and %d price records of %v relayed (%d unsent)", len(tokens), len(prices), queued, unsent)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if queued[eventsv1.TopicMarketTokens] != 1 || queued[eventsv1.TopicPrices] != 2 {
		t.Errorf("outbox records %v, want 1 registry and 2 prices", queued)
	}
	mu.Lock()
	defer mu.Unlock()
	want := &eventsv1.MarketToken{PricingId: "ethereum", Name: "Ethereum", Symbol: "ETH", MarketCap: &mc,
		Deployments: []*eventsv1.MarketToken_Deployment{{Chain: "ethereum", Decimals: 18}, {Chain: "base", Decimals: 18}}}
	if len(tokens) != 1 || tokens[0].Key != "ethereum" || !proto.Equal(tokens[0].Msg, want) {
		t.Errorf("registry records %v, want one %v keyed ethereum", tokens, want)
	}
	if len(prices) != 2 || prices[0].Key != "ethereum" || prices[0].Msg.TimeMs != at.UnixMilli() || prices[0].Msg.Price != 3000 {
		t.Errorf("price records %v", prices)
	}
}

// outboxAfter counts the outbox records after id before, by topic, and those not sent yet.
func outboxAfter(t *testing.T, pool *pgxpool.Pool, before int64) (map[string]int, int) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT topic, count(*), count(*) FILTER (WHERE sent_at IS NULL)
		FROM market.outbox WHERE id > $1 GROUP BY topic`, before)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	queued, unsent := map[string]int{}, 0
	for rows.Next() {
		var topic string
		var n, u int
		if err := rows.Scan(&topic, &n, &u); err != nil {
			t.Fatal(err)
		}
		queued[topic], unsent = n, unsent+u
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return queued, unsent
}
