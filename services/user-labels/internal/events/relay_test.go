package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/eventbus/kafkatest"
	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/promscrape"
	"github.com/chainintel/chainintel/libs/telemetry"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/chainintel/chainintel/services/user-labels/internal/store"
	"github.com/chainintel/chainintel/services/user-labels/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/protobuf/proto"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgstore.Migrate(ctx, pool, migrations.Schema, migrations.FS, nil)
	}))
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func addr(n int) string { return fmt.Sprintf("0x%040x", n+1) }

func refs(ns ...int) []*eventsv1.AddressRef {
	out := make([]*eventsv1.AddressRef, len(ns))
	for i, n := range ns {
		out[i] = &eventsv1.AddressRef{ChainType: "evm", Address: addr(n)}
	}
	return out
}

type received struct {
	mu  sync.Mutex
	got []eventbus.Message[*eventsv1.UserChange]
}

func (r *received) handle(_ context.Context, b []eventbus.Message[*eventsv1.UserChange]) error {
	r.mu.Lock()
	r.got = append(r.got, b...)
	r.mu.Unlock()
	return nil
}

func (r *received) wait(t *testing.T, user string, n int) []eventbus.Message[*eventsv1.UserChange] {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		var mine []eventbus.Message[*eventsv1.UserChange]
		for _, m := range r.got {
			if m.Key == user {
				mine = append(mine, m)
			}
		}
		r.mu.Unlock()
		if len(mine) >= n || time.Now().After(deadline) {
			if len(mine) != n {
				t.Fatalf("got %d events for %s, want %d", len(mine), user, n)
			}
			return mine
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Every committed change reaches user.changes.v1, keyed by user id, with the outbox row's event
// id; rejected changes publish nothing; rows are marked sent.
func TestChangesArePublishedThroughTheOutbox(t *testing.T) {
	brokers := kafkatest.Broker(t, eventsv1.TopicUserChanges)
	pool := pgtest.Pool(t)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	t.Cleanup(func() { _ = pub.Close() })

	var relay *outbox.Relay
	st := store.New(pool, store.OnOutbox(func() { relay.Kick() }))
	// A long poll interval: only the kick can make these events arrive quickly.
	relay = NewRelay(st, pub, outbox.Options{PollInterval: time.Hour, Logger: quiet})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	var rec received
	cons := eventbus.NewConsumer(eventbus.ConsumerOptions{Brokers: brokers, Group: "test", Topic: eventsv1.TopicUserChanges, Logger: quiet},
		func() *eventsv1.UserChange { return &eventsv1.UserChange{} }, rec.handle)
	cctx, ccancel := context.WithCancel(context.Background())
	cdone := make(chan error, 1)
	go func() { cdone <- cons.Run(cctx) }()
	t.Cleanup(func() { ccancel(); <-cdone })

	svc := app.New(st, app.NewChainTypes(nil))
	const user = "user-outbox"
	bg := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.PutLabels(bg, user, []app.LabelInput{{Name: "a", Address: addr(2), ChainType: "evm"}, {Name: "b", Address: addr(1), ChainType: "evm"}}))
	must(svc.UpdateLabel(bg, user, addr(1)+":evm", app.LabelUpdate{Name: "b2"}))
	must(svc.DeleteLabels(bg, user, []app.AddressRef{{ChainType: "evm", Address: addr(1)}, {ChainType: "evm", Address: addr(50)}}))
	must(svc.DeleteLabels(bg, user, []app.AddressRef{{ChainType: "evm", Address: addr(50)}})) // deleted nothing: no event
	es, err := svc.CreateEntities(bg, user, []app.EntityBody{{Name: "e", Addresses: map[string][]string{"evm": {addr(3), addr(4)}}}}, false)
	must(es, err)
	id := es[0].ID
	must(svc.ReplaceEntity(bg, user, id, app.EntityBody{Name: "e2", Addresses: map[string][]string{"evm": {addr(4), addr(5)}}}))
	must(svc.AddAddresses(bg, user, id, map[string][]string{"evm": {addr(5), addr(6)}}))
	must(svc.AddAddresses(bg, user, id, map[string][]string{"evm": {addr(6)}})) // nothing new: no event
	must(svc.AddAddresses(bg, user, "binance", map[string][]string{"evm": {addr(7)}}))
	must(svc.AddAddresses(bg, user, "kraken", map[string][]string{"evm": {addr(9), addr(8)}}))
	must(svc.DeleteEntity(bg, user, "kraken"))
	if _, err := svc.DeleteEntity(bg, user, "kraken"); err == nil { // nothing left: no event
		t.Fatal("deleting additions twice succeeded")
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = addr(1000 + i)
	}
	if _, err := svc.AddAddresses(bg, user, id, map[string][]string{"evm": many}); err == nil {
		t.Fatal("101 addresses were accepted")
	}
	must(svc.DeleteEntity(bg, user, id))

	label, entity, additions := eventsv1.UserChange_KIND_LABEL, eventsv1.UserChange_KIND_ENTITY, eventsv1.UserChange_KIND_ENTITY_ADDITIONS
	upsert, del := eventsv1.UserChange_OP_UPSERT, eventsv1.UserChange_OP_DELETE
	want := []*eventsv1.UserChange{
		{UserId: user, Kind: label, Op: upsert, Addresses: refs(2, 1)},
		{UserId: user, Kind: label, Op: upsert, Addresses: refs(1)},
		{UserId: user, Kind: label, Op: del, Addresses: refs(1)},
		{UserId: user, Kind: entity, Op: upsert, EntityId: id, Addresses: refs(3, 4)},
		{UserId: user, Kind: entity, Op: upsert, EntityId: id, Addresses: refs(3, 4, 5)},
		{UserId: user, Kind: entity, Op: upsert, EntityId: id, Addresses: refs(6)},
		{UserId: user, Kind: additions, Op: upsert, EntityId: "binance", Addresses: refs(7)},
		{UserId: user, Kind: additions, Op: upsert, EntityId: "kraken", Addresses: refs(8, 9)},
		{UserId: user, Kind: additions, Op: del, EntityId: "kraken", Addresses: refs(8, 9)},
		{UserId: user, Kind: entity, Op: del, EntityId: id, Addresses: refs(4, 5, 6)},
	}
	got := rec.wait(t, user, len(want))
	var ids []string
	for i, m := range got {
		m.Msg.TimeMs = 0
		if !proto.Equal(m.Msg, want[i]) {
			t.Fatalf("event %d:\n got %v\nwant %v", i, m.Msg, want[i])
		}
		if m.EventType != "chainintel.events.v1.UserChange" || m.EventID == "" {
			t.Fatalf("event %d headers: type %q id %q", i, m.EventType, m.EventID)
		}
		ids = append(ids, m.EventID)
	}
	// The event ids are the outbox rows', and every row is marked sent (the relay marks a batch
	// after the broker took it, so a consumer can read its events first: waited for).
	var sent []string
	for deadline := time.Now().Add(20 * time.Second); ; {
		var err error
		if sent, err = sentEventIDs(bg, pool, user); err != nil {
			t.Fatal(err)
		}
		if slices.Equal(sent, ids) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !slices.Equal(sent, ids) {
		t.Fatalf("sent rows %v, event ids %v", sent, ids)
	}
	if n, err := st.PendingOutbox(bg); err != nil || n != 0 {
		t.Fatalf("pending %d %v", n, err)
	}

	// A big batch of labels is split into events of at most MaxEventAddresses addresses.
	big := make([]app.LabelInput, 2*store.MaxEventAddresses+1)
	for i := range big {
		big[i] = app.LabelInput{Name: "x", Address: addr(10000 + i), ChainType: "evm"}
	}
	must(svc.PutLabels(bg, "user-big", big))
	sizes := []int{}
	for _, m := range rec.wait(t, "user-big", 3) {
		sizes = append(sizes, len(m.Msg.Addresses))
	}
	if !slices.Equal(sizes, []int{1000, 1000, 1}) {
		t.Fatalf("event sizes %v", sizes)
	}
}

type failingPublisher struct{ calls int }

func (f *failingPublisher) Publish(context.Context, ...eventbus.Event) error {
	f.calls++
	return errors.New("broker unreachable")
}

// When publishing fails the events stay in the outbox, and a later drain sends them; the
// relay's metrics, as exported, show the pending rows and the failure, then the rows published.
func TestFailedPublishLeavesEventsPending(t *testing.T) {
	pool := pgtest.Pool(t)
	bg := context.Background()
	st := store.New(pool)
	if _, err := pool.Exec(bg, "DELETE FROM userdata.outbox"); err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(bg, "user-labels", telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(promhttp.HandlerFor(tel.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	metric := func(name string) float64 {
		t.Helper()
		s, err := promscrape.Scrape(bg, http.DefaultClient, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := s.Value(name, map[string]string{"outbox": "userdata.outbox"})
		if !ok {
			t.Fatalf("%s{outbox=\"userdata.outbox\"} not exported", name)
		}
		return v
	}
	opts := outbox.Options{Logger: quiet, Meter: tel.Meter()}
	svc := app.New(st, app.NewChainTypes(nil))
	if _, err := svc.PutLabels(bg, "user-fail", []app.LabelInput{{Name: "a", Address: addr(1), ChainType: "evm"}}); err != nil {
		t.Fatal(err)
	}
	before, err := st.PendingOutbox(bg)
	if err != nil || before == 0 {
		t.Fatalf("pending %d %v", before, err)
	}
	fp := &failingPublisher{}
	failing := NewRelay(st, fp, opts)
	if err := failing.Drain(bg); err == nil || fp.calls != 1 {
		t.Fatalf("drain with a failing broker: %v after %d calls", err, fp.calls)
	}
	if n, _ := st.PendingOutbox(bg); n != before {
		t.Fatalf("pending after a failed publish: %d, want %d", n, before)
	}
	failing.ObserveBacklog(bg)
	if p, f := metric("outbox_pending_rows"), metric("outbox_publish_failures_total"); p != float64(before) || f != 1 {
		t.Fatalf("exported pending %v, failures %v; want %d and 1", p, f, before)
	}

	brokers := kafkatest.Broker(t, eventsv1.TopicUserChanges)
	pub := eventbus.NewPublisher(brokers, eventbus.PublisherOptions{})
	defer pub.Close()
	good := NewRelay(st, pub, opts)
	if err := good.Drain(bg); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.PendingOutbox(bg); n != 0 {
		t.Fatalf("pending after a good drain: %d", n)
	}
	good.ObserveBacklog(bg)
	if p, a, n := metric("outbox_pending_rows"), metric("outbox_oldest_pending_age_seconds"), metric("outbox_published_total"); p != 0 || a != 0 || n != float64(before) {
		t.Fatalf("exported pending %v, oldest age %v, published %v after a good drain; want 0, 0 and %d", p, a, n, before)
	}
	// Sent rows are pruned after the retention.
	if n, err := st.PruneOutbox(bg, time.Now().Add(time.Minute)); err != nil || n < before {
		t.Fatalf("pruned %d %v", n, err)
	}
}

// sentEventIDs are the event ids of key's outbox rows marked sent, in row order.
func sentEventIDs(ctx context.Context, pool *pgxpool.Pool, key string) ([]string, error) {
	rows, err := pool.Query(ctx, `SELECT event_id::text FROM userdata.outbox WHERE key = $1 AND sent_at IS NOT NULL ORDER BY id`, key)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
