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
		MaxBackoff: 2 * time.Millisecond, Sent: ours.Sent, Log: slog.New(slog.DiscardHandler)})

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
		durable, err := store.PeriodUsed(ctx, e, start)
		if err != nil {
			t.Fatal(err)
		}
		return durable == 19 && used == 19
	})
}
