package events_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/balances/internal/events"
	"github.com/chainintel/chainintel/services/balances/internal/store"
	"github.com/chainintel/chainintel/services/balances/migrations"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

const (
	a1  = "0x00000000000000000000000000000000000000a1"
	tok = "0x00000000000000000000000000000000000000f0"
)

// consume runs the service's handlers as consumer groups on the in-process broker.
func consume(t *testing.T, brokers []string, h events.Handlers) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 4)
	run := func(c interface{ Run(context.Context) error }) {
		go func() { _ = c.Run(ctx); done <- struct{}{} }()
	}
	o := func(topic string) eventbus.ConsumerOptions {
		return eventbus.ConsumerOptions{Brokers: brokers, Group: "balances-test." + topic, Topic: topic, MaxWait: 20 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)}
	}
	run(eventbus.NewConsumer(o(eventsv1.TopicBalances), func() *eventsv1.BalanceObservation { return new(eventsv1.BalanceObservation) }, h.Balances))
	run(eventbus.NewConsumer(o(eventsv1.TopicReorgs), func() *eventsv1.Reorg { return new(eventsv1.Reorg) }, h.Reorgs))
	run(eventbus.NewConsumer(o(eventsv1.TopicAttributions), func() *eventsv1.Attribution { return new(eventsv1.Attribution) }, h.Attributions))
	if st, ok := h.W.(events.PendingApplier); ok {
		run(events.Applier{Store: st, Log: slog.New(slog.DiscardHandler), Batch: 1000, Idle: 10 * time.Millisecond, Retry: 100 * time.Millisecond})
	} else {
		done <- struct{}{}
	}
	t.Cleanup(func() {
		cancel()
		for range 4 {
			<-done
		}
	})
}

func eventually(t *testing.T, what string, f func() (string, string)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, want := f()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s, want %s", what, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Through the in-process broker: observations published twice (at-least-once delivery), a late
// older one, an attribution, a reorg and a relabel, all land exactly once.
func TestConsumersThroughBroker(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	st := store.New(pool)
	brokers := kafkatest.Broker(t, eventsv1.TopicBalances, eventsv1.TopicReorgs, eventsv1.TopicAttributions)
	consume(t, brokers, events.Handlers{W: st, Log: slog.New(slog.DiscardHandler)})
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	day := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	ob := func(block uint64, bal string) eventbus.Event {
		return eventbus.Event{Topic: eventsv1.TopicBalances, Key: "ethereum:" + a1, Msg: &eventsv1.BalanceObservation{
			Chain: "ethereum", Address: "0x00000000000000000000000000000000000000A1", TokenAddress: tok, TokenDecimals: 18, TokenSymbol: "T",
			BlockNumber: block, BlockHash: fmt.Sprintf("0x%x", block), BlockTimeMs: day + int64(block)*1000, Balance: bal}}
	}
	attr := eventbus.Event{Topic: eventsv1.TopicAttributions, Key: "evm:" + a1, Msg: &eventsv1.Attribution{ChainType: "evm", Address: a1,
		Entity: &eventsv1.Entity{Id: "x", Name: "X", Type: "cex"}, Version: 1}}
	if err := pub.Publish(ctx, attr); err != nil {
		t.Fatal(err)
	}
	batch := []eventbus.Event{ob(10, "100000000000000000000000000000"), ob(12, "18446744073709551617000")}
	for range 2 {
		if err := pub.Publish(ctx, batch...); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Publish(ctx, ob(11, "5")); err != nil { // late and older
		t.Fatal(err)
	}
	read := func(sql string) func() string {
		return func() string {
			var v *string
			if err := pool.QueryRow(ctx, sql).Scan(&v); err != nil || v == nil {
				return fmt.Sprint(err)
			}
			return *v
		}
	}
	cur := read(`SELECT balance::text FROM balances.current WHERE address = '` + a1 + `'`)
	ent := read(`SELECT sum(delta)::text FROM balances.entity_change WHERE entity_id = 'x'`)
	// observations is append-only: a redelivered observation is stored again, the same one.
	obsCount := read(`SELECT count(DISTINCT (chain, address, token, block_number, block_hash, balance))::text FROM balances.observations`)
	eventually(t, "observations", func() (string, string) { return obsCount(), "3" })
	eventually(t, "current", func() (string, string) { return cur(), "18446744073709551617000" })
	eventually(t, "entity", func() (string, string) { return ent(), "18446744073709551617000" })
	// A reorg orphans block 12: the balance falls back to block 11, the newest surviving one.
	if err := pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicReorgs, Key: "ethereum", Msg: &eventsv1.Reorg{Chain: "ethereum",
		CommonAncestorNumber: 11, Orphaned: []*eventsv1.Reorg_Block{{Number: 12, Hash: "0xc"}}}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "current after reorg", func() (string, string) { return cur(), "5" })
	eventually(t, "entity after reorg", func() (string, string) { return ent(), "5" })
	// A relabel to y moves the balance and its history.
	if err := pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicAttributions, Key: "evm:" + a1, Msg: &eventsv1.Attribution{ChainType: "evm",
		Address: a1, Entity: &eventsv1.Entity{Id: "y", Name: "Y", Type: "fund", Description: "A fund.",
			PopulatedTags: []*eventsv1.PopulatedTag{{Id: "fund", Label: "Fund", Rank: 3, TagParams: "p", Chain: "ethereum"}}, Version: 3}, Version: 2}}); err != nil {
		t.Fatal(err)
	}
	entY := read(`SELECT sum(delta)::text FROM balances.entity_change WHERE entity_id = 'y'`)
	eventually(t, "y after relabel", func() (string, string) { return entY(), "5" })
	eventually(t, "x after relabel", func() (string, string) { return ent(), "0" })
	// The entity's description and populated tags come with it.
	details := read(`SELECT description || ' ' || populated_tags::text FROM balances.entities WHERE id = 'y'`)
	yDetails := `A fund. [{"id": "fund", "rank": 3, "chain": "ethereum", "label": "Fund", "tagParams": "p", "disablePage": false, "excludeEntities": false}]`
	eventually(t, "y's details", func() (string, string) { return details(), yDetails })
	// Another address of y arrives later with older details (version 2 < 3): y keeps the newer
	// ones; the address itself is attributed.
	const a2 = "0x00000000000000000000000000000000000000a2"
	if err := pub.Publish(ctx, eventbus.Event{Topic: eventsv1.TopicAttributions, Key: "evm:" + a2, Msg: &eventsv1.Attribution{ChainType: "evm",
		Address: a2, Entity: &eventsv1.Entity{Id: "y", Name: "Y", Type: "fund", Description: "Older.", Version: 2}, Version: 1}}); err != nil {
		t.Fatal(err)
	}
	attributed := read(`SELECT entity_id FROM balances.attributions WHERE address = '` + a2 + `'`)
	eventually(t, "a2's attribution", func() (string, string) { return attributed(), "y" })
	if got := details(); got != yDetails {
		t.Fatalf("y's details after older ones: %s, want %s", got, yDetails)
	}
}
