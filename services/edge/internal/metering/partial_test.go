package metering_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx/redistest"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/edge/internal/metering"
	"github.com/chainintel/chainintel/services/edge/internal/usage"
)

// halfPub writes the first half of each batch it is given and then fails (a broker that took
// some partitions' records and not the others'), until opened; it keeps each write, repeats
// included, as a broker does.
type halfPub struct {
	mu      sync.Mutex
	open    bool
	refused int
	got     []eventbus.Event
}

func (p *halfPub) Publish(_ context.Context, evs ...eventbus.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		p.got = append(p.got, evs...)
		return nil
	}
	p.refused++
	p.got = append(p.got, evs[:len(evs)/2]...)
	return errors.New("not enough replicas")
}

func (p *halfPub) setOpen() { p.mu.Lock(); p.open = true; p.mu.Unlock() }

func (p *halfPub) state() (refused int, calls []usage.Call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.got {
		calls = append(calls, callOf(e))
	}
	return p.refused, calls
}

// A publish that writes part of a batch and fails is retried; meanwhile the consumer counts the
// part written. The live total counts each call once throughout: the calls written (found
// counted by event id) leave this replica's own calls, those not written stay in it, also once
// another replica's newer call moves "through" past them, and once the retry is published the
// total is the durable ledger's.
func TestPartlyWrittenBatchCountedOnce(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	org := "org-partial-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	ours := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	other := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	pub := &halfPub{}
	p := metering.NewProducer(pub, metering.ProducerOptions{Batch: 4, Backoff: time.Millisecond,
		MaxBackoff: 2 * time.Millisecond, Sent: ours.Sent, Unconfirmed: ours.Unconfirmed, Log: slog.New(slog.DiscardHandler)})

	now := time.Now()
	for i := range 4 {
		_, ev := settle(t, ours, e, now.Add(time.Duration(i)*time.Millisecond), 3)
		p.Record(ev.ID, ev.Msg.(*eventsv1.UsageCall))
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = p.Run(rctx); close(done) }()
	defer func() { cancel(); pub.setOpen(); <-done }()
	waitFor(t, "3 partly written publishes", func() bool { r, _ := pub.state(); return r >= 3 })

	// The consumer counts what was written: the first two calls, each once however often written.
	_, written := pub.state()
	consume(t, ours, store, written)
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 12 {
		t.Fatalf("two of four calls counted by the consumer, two waiting: live total %d, want 12", used)
	}
	// Another replica's newer call, counted, moves "through" past the two calls not written.
	_, ev := settle(t, other, e, now.Add(time.Second), 7)
	other.Sent([]eventbus.Event{ev}, nil)
	consume(t, ours, store, []usage.Call{callOf(ev)})
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 19 {
		t.Fatalf("with through past the calls not written: live total %d, want 19", used)
	}

	pub.setOpen()
	start, _ := usage.PeriodOf(now)
	waitFor(t, "the retry published and counted, the total the durable figure", func() bool {
		_, all := pub.state()
		consume(t, ours, store, all)
		ours.Sync(ctx)
		used, _ := ours.Used(ctx, e)
		tot, err := store.PeriodTotal(ctx, e, start)
		durable := tot.Used
		if err != nil {
			t.Fatal(err)
		}
		return durable == 19 && used == 19
	})
}

// settlingSource is the usage store with a hook run as Counted begins, before it reads.
type settlingSource struct {
	*usage.Store
	before func()
}

func (s *settlingSource) Counted(ctx context.Context, periods []usage.PeriodRef, ids []string) ([]usage.Total, map[string]bool, error) {
	if s.before != nil {
		s.before()
		s.before = nil
	}
	return s.Store.Counted(ctx, periods, ids)
}

// A call published while the ledger asks the durable ledger about its calls in doubt is not
// asked about, but the snapshot's "through" passes it, so it leaves this replica's calls as the
// snapshot's total, which counts it, is taken: it is counted once at once, not twice until the
// next sync.
func TestCallSettledWhileCountedReads(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	src := &settlingSource{Store: store}
	org := "org-during-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	ours := metering.NewCreditLedger(rdb, src, metering.LedgerOptions{})
	now := time.Now()
	var evs []eventbus.Event
	for i := range 3 {
		_, ev := settle(t, ours, e, now.Add(time.Duration(i)*time.Millisecond), 3)
		evs = append(evs, ev)
	}
	// A publish of the three failed after writing the first two, and the consumer counted them.
	ours.Unconfirmed(evs)
	consume(t, ours, store, []usage.Call{callOf(evs[0]), callOf(evs[1])})
	// As the ledger asks, a newer call is settled, published and counted.
	src.before = func() {
		_, ev := settle(t, ours, e, now.Add(10*time.Millisecond), 5)
		ours.Sent([]eventbus.Event{ev}, nil)
		consume(t, ours, store, []usage.Call{callOf(ev)})
	}
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 14 {
		t.Fatalf("after a sync that read while a call was published: %d, want 14 (19: that call's 5 twice)", used)
	}
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 14 {
		t.Fatalf("after the next sync: %d, want 14", used)
	}
}

// Two consumer replicas count two batches: one commits our call and has not yet copied the
// total to Redis when the other, with an older call of another replica, commits and copies it.
// The total it copies includes our call, and so does the "through" beside it (both read from
// the durable ledger together), so our replica, whose call was published, does not count it a
// second time.
func TestTotalCopiedByAnotherConsumerCountsOurCallOnce(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	org := "org-copy-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	ours := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	other := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	now := time.Now()
	_, ourCall := settle(t, ours, e, now.Add(100*time.Millisecond), 3)
	ours.Sent([]eventbus.Event{ourCall}, nil)
	_, olderCall := settle(t, other, e, now, 7)
	// The first consumer commits our call and copies nothing yet.
	if _, err := store.Apply(ctx, []usage.Call{callOf(ourCall)}); err != nil {
		t.Fatal(err)
	}
	// The second commits the older call and copies the total.
	consume(t, other, store, []usage.Call{callOf(olderCall)})
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 10 {
		t.Fatalf("live total %d, want 10 (13: our call counted twice)", used)
	}
	// The first consumer copies its total too: nothing changes.
	if err := ours.Publish(ctx, []usage.Call{callOf(ourCall)}); err != nil {
		t.Fatal(err)
	}
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 10 {
		t.Fatalf("live total %d after both copies, want 10", used)
	}
}
