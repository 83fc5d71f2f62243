package metering_test

import (
	"context"
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
	"github.com/google/uuid"
)

// outagePub fails every publish, writing nothing, until opened; then it keeps what it is given.
type outagePub struct {
	mu   sync.Mutex
	open bool
	got  []eventbus.Event
}

func (p *outagePub) Publish(_ context.Context, evs ...eventbus.Event) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.open {
		return fmt.Errorf("broker unavailable")
	}
	p.got = append(p.got, evs...)
	return nil
}

func (p *outagePub) setOpen() { p.mu.Lock(); p.open = true; p.mu.Unlock() }

func (p *outagePub) calls() []usage.Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]usage.Call, 0, len(p.got))
	for _, e := range p.got {
		out = append(out, callOf(e))
	}
	return out
}

// While the broker is down, our calls wait in the producer; another replica's newer calls,
// counted by the consumer, move "through" past them, and the live total still includes them.
// Once they are published and counted, the total equals the durable ledger, each call once.
func TestOwnCallsKeptUntilTheirEventsArePublished(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	org := "org-sent-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	ours := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	other := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	pub := &outagePub{}
	p := metering.NewProducer(pub, metering.ProducerOptions{Batch: 2, Backoff: time.Millisecond,
		MaxBackoff: 2 * time.Millisecond, Sent: ours.Sent, Unconfirmed: ours.Unconfirmed, Log: slog.New(slog.DiscardHandler)})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = p.Run(rctx); close(done) }()
	defer func() { cancel(); pub.setOpen(); <-done }()

	now := time.Now()
	for i := range 5 {
		_, ev := settle(t, ours, e, now.Add(time.Duration(i)*time.Millisecond), 3)
		p.Record(ev.ID, ev.Msg.(*eventsv1.UsageCall))
	}
	// The other replica's newer call is published and counted.
	_, ev := settle(t, other, e, now.Add(time.Second), 7)
	other.Sent([]eventbus.Event{ev}, nil)
	consume(t, ours, store, []usage.Call{callOf(ev)})
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != 7+15 {
		t.Fatalf("during the outage, through past our calls: %d, want 22", used)
	}

	pub.setOpen()
	start, _ := usage.PeriodOf(now)
	var durable int64
	waitFor(t, "our events published and counted, the total the durable figure", func() bool {
		consume(t, ours, store, pub.calls())
		ours.Sync(ctx)
		used, _ := ours.Used(ctx, e)
		tot, err := store.PeriodTotal(ctx, e, start)
		if err != nil {
			t.Fatal(err)
		}
		durable = tot.Used
		return durable == 22 && used == durable
	})
	ours.Sync(ctx)
	if used, _ := ours.Used(ctx, e); used != durable {
		t.Fatalf("after a further sync: %d, want the durable %d", used, durable)
	}
}

// An event the producer drops (queue full) is never counted, so its call leaves the live total
// at once, as it never reaches the bill.
func TestDroppedEventReleasesItsCall(t *testing.T) {
	ctx := context.Background()
	rdb, _ := redistest.Client(t)
	store := usage.NewStore(pgtest.Pool(t))
	org := "org-drop-" + fmt.Sprint(time.Now().UnixNano())
	e := usage.Entity{Type: usage.EntityOrg, ID: org}
	l := metering.NewCreditLedger(rdb, store, metering.LedgerOptions{})
	p := metering.NewProducer(&outagePub{}, metering.ProducerOptions{Queue: 1, Sent: l.Sent}) // not running: the queue stays full
	at := time.Now()
	if _, err := l.Used(ctx, e); err != nil {
		t.Fatal(err)
	}
	var queued []bool
	for range 2 {
		id := uuid.Must(uuid.NewV7()).String()
		l.Settle(metering.Hold{}, e, 4, at, id)
		queued = append(queued, p.Record(id, &eventsv1.UsageCall{KeyId: "k", UserId: "u", OrgId: org, Credits: 4, TimeMs: at.UnixMilli()}))
	}
	if !queued[0] || queued[1] {
		t.Fatalf("queued %v, want the first only", queued)
	}
	if used, _ := l.Used(ctx, e); used != 4 {
		t.Fatalf("after a dropped event: %d, want 4", used)
	}
}

// settle makes one call of credits at at as the Metering middleware does: it holds the credits
// (Reserve) and settles them with the id of the call's usage event (Settle). It returns the
// period total Settle answered and that event, for the caller to record, report sent (as the
// producer does) or consume.
func settle(t *testing.T, l *metering.CreditLedger, e usage.Entity, at time.Time, credits int64) (int64, eventbus.Event) {
	t.Helper()
	h, err := l.Reserve(context.Background(), e, at, credits, -1)
	if err != nil || !h.OK {
		t.Fatalf("reserve: %+v %v", h, err)
	}
	id := uuid.Must(uuid.NewV7()).String()
	total := l.Settle(h, e, credits, at, id)
	c := &eventsv1.UsageCall{KeyId: "k", UserId: e.ID, Route: "/tx/{hash}", Credits: credits, TimeMs: at.UnixMilli()}
	if e.Type == usage.EntityOrg {
		c.UserId, c.OrgId = "u", e.ID
	}
	return total, eventbus.Event{Topic: eventsv1.TopicUsageCalls, Key: c.KeyId, Msg: c, ID: id}
}

// callOf is the call the metering consumer reads from a usage event.
func callOf(ev eventbus.Event) usage.Call {
	c := ev.Msg.(*eventsv1.UsageCall)
	return usage.Call{EventID: ev.ID, KeyID: c.GetKeyId(), UserID: c.GetUserId(), OrgID: c.GetOrgId(),
		Route: c.GetRoute(), Credits: c.GetCredits(), Time: time.UnixMilli(c.GetTimeMs())}
}

// consume is the metering consumer: it counts calls in the usage store and publishes the totals.
func consume(t *testing.T, l *metering.CreditLedger, store *usage.Store, calls []usage.Call) {
	t.Helper()
	if len(calls) == 0 {
		return
	}
	if _, err := store.Apply(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	if err := l.Publish(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
}
