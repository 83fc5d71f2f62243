package ws

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/redis/go-redis/v9"
)

// beforeEval runs fn (once) just before the next EVAL/EVALSHA reaches Redis; an error it returns
// is that command's, which then never reaches Redis.
type beforeEval struct{ fn atomic.Pointer[func() error] }

func (b *beforeEval) DialHook(next redis.DialHook) redis.DialHook { return next }
func (b *beforeEval) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (b *beforeEval) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			if f := b.fn.Swap(nil); f != nil {
				if err := (*f)(); err != nil {
					cmd.SetErr(err)
					return err
				}
			}
		}
		return next(ctx, cmd)
	}
}

// charging is a hub with a meter, and a connection "a" serving session id of key "k".
type charging struct {
	h    *Hub
	st   *store.Store
	m    *Meter
	pub  *fakePub
	c    *conn
	id   string
	hook *beforeEval
}

func newCharging(t *testing.T, prefix string) *charging {
	t.Helper()
	rdb, _ := redistest.Client(t)
	hook := &beforeEval{}
	rdb.AddHook(hook)
	st := store.New(rdb, prefix, nil)
	e := engine.New(engine.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	pub := &fakePub{}
	m := NewMeter(pub, time.Hour, nil)
	h := NewHub(Options{Engine: e, Store: st, Meter: m})
	id := "sess-" + prefix
	if err := st.Create(ctx, store.Session{ID: id, KeyID: "k", Kind: KindWS, Created: time.Now()}, time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	c := standIn(t, h, "a")
	ss, err := st.Claim(ctx, id, "k", "a", time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.attach(ss, nil, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := h.add(c); err != nil {
		t.Fatal(err)
	}
	return &charging{h, st, m, pub, c, id, hook}
}

// credits flushes the meter and sums what it published.
func (w *charging) credits(t *testing.T) int64 {
	t.Helper()
	if err := w.m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, u := range w.pub.got {
		n += u.GetCredits()
	}
	return n
}

// releaseDuring has the connection's end save its session (detach, as saveAfter runs it) while
// the checkpoint's save is on its way to Redis; failWith, if set, is that save's error. It
// waits for the end's save as long as that does not wait for the checkpoint.
func (w *charging) releaseDuring(t *testing.T, failWith error) (wait func()) {
	ended := make(chan struct{})
	end := func() error {
		go func() {
			defer close(ended)
			if err := w.c.detach(context.Background(), true); err != nil {
				t.Errorf("disconnect save: %v", err)
			}
		}()
		select {
		case <-ended:
		case <-time.After(300 * time.Millisecond):
		}
		return failWith
	}
	w.hook.fn.Store(&end)
	return func() { <-ended }
}

// A connection ending while the checkpoint is saving (after the checkpoint took its deliveries,
// before its save reached Redis) saves the session with a cursor covering them. Before, the
// checkpoint's save then found the session released, was refused as taken over and dropped them
// (credits given back), and the end's save had not taken them: nobody sends them again, and
// nobody charged them.
func TestCheckpointRacingTheConnectionsEndChargesItsDeliveries(t *testing.T) {
	w := newCharging(t, "cre:")
	ctx := context.Background()
	w.c.account([]heldCredits{{3, time.Now().Truncate(time.Hour)}}, time.Now())
	wait := w.releaseDuring(t, nil)
	w.h.checkpoint(ctx)
	wait()
	if got := w.credits(t); got != 3 {
		t.Fatalf("charged %d credits for 3 deliveries the saves covered", got)
	}
	if ss, err := w.st.Get(ctx, w.id, "k"); err != nil || ss.Used != 3 || ss.Connected() {
		t.Fatalf("session used %d, owner %q (%v); want 3, released", ss.Used, ss.Owner, err)
	}
}

// The same with the checkpoint's save failing (Redis): its deliveries are kept for the next
// save, the end's. Before, they were kept in a connection whose end had saved already, and never
// charged.
func TestCheckpointFailingAsTheConnectionEndsLeavesItsDeliveriesToTheEnd(t *testing.T) {
	w := newCharging(t, "crf:")
	ctx := context.Background()
	w.c.account([]heldCredits{{3, time.Now().Truncate(time.Hour)}}, time.Now())
	wait := w.releaseDuring(t, errors.New("injected: connection reset"))
	w.h.checkpoint(ctx)
	wait()
	if got := w.credits(t); got != 3 {
		t.Fatalf("charged %d credits for 3 deliveries the end's save covered", got)
	}
	if ss, err := w.st.Get(ctx, w.id, "k"); err != nil || ss.Used != 3 {
		t.Fatalf("session used %d (%v); want 3", ss.Used, err)
	}
}

// A release between a checkpoint's taking and its save settles the checkpoint's deliveries with
// its own save, and the checkpoint leaves its save undone: it would be refused (the session is
// released), and the connection, which may serve another session by then, is not ended for it.
func TestReleaseBetweenCheckpointTakeAndSaveSettlesTheCheckpoint(t *testing.T) {
	w := newCharging(t, "crb:")
	ctx := context.Background()
	w.c.account([]heldCredits{{2, time.Now().Truncate(time.Hour)}}, time.Now())
	var m mark
	w.h.o.Engine.Do(ctx, func() {
		sub, id := w.c.settled()
		w.c.dmu.Lock()
		d, lets := w.c.takeInflight()
		m = mark{w.c, id, w.h.servedAt(w.c, sub), d, lets}
		w.c.dmu.Unlock()
	})
	w.c.account([]heldCredits{{1, time.Now().Truncate(time.Hour)}}, time.Now())
	if err := w.c.detach(ctx, false); err != nil {
		t.Fatal(err)
	}
	w.h.save(ctx, m)
	if got := w.credits(t); got != 3 {
		t.Fatalf("charged %d credits for 3 deliveries the release's save covered", got)
	}
	if ss, err := w.st.Get(ctx, w.id, "k"); err != nil || ss.Used != 3 {
		t.Fatalf("session used %d (%v); want 3", ss.Used, err)
	}
	if w.c.ctx.Err() != nil {
		t.Fatal("the connection was ended for the checkpoint's save of the session it let go")
	}
}

// A checkpoint (holding the delivery lock as it takes the deliveries and reads the position)
// sees a batch either sent and accounted, or neither: before, the queue let go of the batch's
// transfers (the position moved past them) before they were accounted, and a checkpoint between
// saved a cursor past them while leaving their charge to a later save, which a take-over refuses.
func TestCheckpointSeesABatchSentOnlyWithItsCharge(t *testing.T) {
	w := newCharging(t, "crs:")
	r := &engine.Rendered{Part: 0, Off: 5}
	w.c.q.push(out{item: engine.Item{R: r}, credit: true})
	if _, ok := w.c.q.next(); !ok {
		t.Fatal("nothing queued")
	}
	w.c.dmu.Lock() // as the checkpoint does
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		w.c.settle([]batchMark{{end: 1, inflight: true, credit: true, r: r, hour: time.Now().Truncate(time.Hour)}}, 1, nil)
	}()
	select {
	case <-settled:
	case <-time.After(200 * time.Millisecond):
	}
	low := w.c.q.lowest()
	n := w.c.pend.n
	w.c.dmu.Unlock()
	<-settled
	if off, ok := low[0]; !ok || off != 5 || n != 0 {
		t.Fatalf("the checkpoint saw the batch's transfer at %v (%v) and %d accounted; want it still held at 5, not accounted", off, ok, n)
	}
	if w.c.pend.n != 1 {
		t.Fatalf("%d accounted after the batch settled; want 1", w.c.pend.n)
	}
}

// A save covering deliveries of two hours meters each in its own hour (a usage event each), not
// all at the first delivery's time, in the hour (or billing period) before.
func TestChargeMetersEachHourInItsHour(t *testing.T) {
	w := newCharging(t, "crh:")
	h1 := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	h2 := h1.Add(time.Hour)
	w.c.account([]heldCredits{{2, h1}}, h1.Add(59*time.Minute))
	w.c.account([]heldCredits{{5, h2}}, h2.Add(time.Minute))
	w.h.checkpoint(context.Background())
	if got := w.credits(t); got != 7 {
		t.Fatalf("charged %d credits, want 7", got)
	}
	at := map[int64]int64{}
	for _, u := range w.pub.got {
		at[time.UnixMilli(u.GetTimeMs()).UTC().Truncate(time.Hour).Unix()] += u.GetCredits()
	}
	if at[h1.Unix()] != 2 || at[h2.Unix()] != 5 {
		t.Fatalf("metered by hour %v; want 2 in %v and 5 in %v", at, h1, h2)
	}
}
