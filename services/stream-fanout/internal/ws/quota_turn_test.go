package ws

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/redis/go-redis/v9"
)

// monthCounted is what Redis counts for key k in the month of at.
func monthCounted(t *testing.T, st *store.Store, at time.Time) int64 {
	t.Helper()
	_, m, err := st.Counted(context.Background(), st.WindowAt("k", at))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Credits leased by an idle connection go back when the hour turns, by the sweep, before the
// month's count expires with them: leased at 23:30 on a month's last day, one delivered, the
// month counts one once the sweep has run in the next hour.
func TestSweepGivesBackCreditsOfAPastHour(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 31, 23, 30, 0, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 100, Monthly: 1000}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
	kq := q.attach("k")
	march := clk.now()
	if got, _, _, err := q.take(context.Background(), kq, "t", 1); err != nil || got != 1 {
		t.Fatal(got, err)
	}
	q.settleForTest()
	clk.add(35 * time.Minute) // 00:05 in April
	q.sweep(context.Background())
	q.settleForTest()
	if m := monthCounted(t, st, march); m != 1 {
		t.Fatalf("March counts %d after the sweep past its last hour, one was delivered", m)
	}
}

// A lease whose reply was lost just before the hour turned is retried with its op after the
// turn (Redis answers the grant it recorded, counting nothing more) and given back to its hour;
// so is one whose key's entry was let go first (the sweep runs it again). The month counts
// only what was delivered.
func TestLostLeaseAcrossTheHourTurn(t *testing.T) {
	for _, detachFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("detachFirst=", detachFirst), func(t *testing.T) {
			clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 59, 59, 0, time.UTC)}
			st, hook := hookedStore(t, clk.now)
			lim := store.Limits{Hourly: 100, Monthly: 1000}
			q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
			kq := q.attach("k")
			hook.lose("lease", 1)
			if _, _, _, err := q.take(context.Background(), kq, "t", 1); err == nil {
				t.Fatal("the take whose lease's reply was lost succeeded")
			}
			clk.add(2 * time.Second)
			var delivered int64
			if detachFirst {
				q.detach(kq)
				q.sweep(context.Background())
				kq = q.attach("k")
			}
			got, _, _, err := q.take(context.Background(), kq, "t", 1)
			if err != nil || got != 1 {
				t.Fatal(got, err)
			}
			delivered += got
			q.settleForTest()
			q.detach(kq)
			q.settleForTest()
			if m := monthCounted(t, st, clk.now()); m != delivered {
				t.Fatalf("the month counts %d, %d delivered", m, delivered)
			}
		})
	}
}

// A replica whose clock is off (behind or ahead of Redis's) counts in Redis's hour: its window
// is the one Redis answered, its quota clock follows Redis's, and the hourly limit holds.
func TestSkewedReplicaFollowsRedisHour(t *testing.T) {
	for _, skew := range []time.Duration{-time.Hour, -2 * time.Second, 2 * time.Second, time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			rdb, _ := redistest.Client(t)
			st := store.New(rdb, fmt.Sprintf("qs%d:", rand.Uint64()), nil)
			lim := store.Limits{Hourly: 40, Monthly: 1000}
			clock := func() time.Time { return time.Now().Add(skew) }
			q := newQuotas(st, func(string) store.Limits { return lim }, 16, clock, time.Second, nil)
			kq := q.attach("k")
			n, r := takeAll(t, q, kq)
			if n != lim.Hourly || r.limitType != store.LimitHourly {
				t.Fatalf("took %d before %q, the hourly limit is %d", n, r.limitType, lim.Hourly)
			}
			redisNow, err := rdb.Time(context.Background()).Result()
			if err != nil {
				t.Fatal(err)
			}
			if want := st.WindowAt("k", redisNow); kq.w.Hour != want.Hour {
				t.Fatalf("the replica counts in hour %v, Redis's is %v", kq.w.Hour, want.Hour)
			}
			if h, _, _ := st.Counted(context.Background(), kq.w); h != lim.Hourly {
				t.Fatalf("Redis counts %d in the replica's hour, %d were taken", h, lim.Hourly)
			}
		})
	}
}

// blackholed is a store whose Redis accepts connections and never answers: a call ends with
// its context, or after the client's read timeout (readTimeout -1: none).
func blackholed(t *testing.T, readTimeout time.Duration) *store.Store {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), MaxRetries: -1, ReadTimeout: readTimeout, ContextTimeoutEnabled: true})
	t.Cleanup(func() {
		_ = rdb.Close()
		_ = ln.Close()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return store.New(rdb, "bh:", nil)
}

// With Redis not answering, returns queue for one worker (no goroutine per return, none
// blocked on a lock) and the hub's Shutdown (its returnAll) ends when its context does.
func TestReturnsBoundedWhenRedisHangs(t *testing.T) {
	st := blackholed(t, 0)
	h := NewHub(Options{Engine: engine.New(engine.Options{}), Store: st, Log: slog.New(slog.DiscardHandler)})
	q := h.quotas
	w := st.WindowAt("k", time.Now())
	before := runtime.NumGoroutine()
	for i := range 500 {
		kq := q.attach(fmt.Sprint("k", i))
		kq.mu.Lock()
		kq.w, kq.left = w, 5
		kq.mu.Unlock()
		q.detach(kq) // its last connection: the credits go back
	}
	if after := runtime.NumGoroutine(); after > before+10 {
		t.Fatalf("%d goroutines after 500 returns, %d before", after, before)
	}
	for range 50 {
		kq := q.attach("held")
		kq.mu.Lock()
		kq.w, kq.left = w, 5
		kq.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { h.Shutdown(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Shutdown did not end with its context")
	}
}

// A batch whose credits come from two takes on either side of the hour's turn (the second
// served from a lease of the new hour) gives back what it did not write to the hour each was
// taken in: the last hour's unwritten credit goes back to it, not to the new hour's lease.
func TestBatchAcrossTheHourGivesBackToEachHour(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 59, 59, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	h := NewHub(Options{Engine: engine.New(engine.Options{}), Store: st, Now: clk.now, Log: slog.New(slog.DiscardHandler)})
	srv, cli := net.Pipe()
	defer srv.Close()
	defer cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	frame := 2 + len(transferHead) + len(`"f"`) + len(transferMid) + len(`{"id":"t"}`) + len(transferTail)
	c := &conn{h: h, ctx: ctx, cc: &corkConn{Conn: &cutConn{Conn: srv, limit: frame + 10}}, q: newQueue(queueSize{Base: 8}), id: Identity{KeyID: "k"}}
	c.kq = h.quotas.attach("k")
	offer := func(n int) {
		for i := range n {
			if c.q.Offer([]engine.Item{{R: &engine.Rendered{Off: int64(i), JSON: []byte(`{"id":"t"}`)}, FilterID: "f"}}) != engine.Queued {
				t.Fatal("not queued")
			}
		}
	}
	// The batch as writeBatch fills it, the hour turning between its two takes.
	var marks []batchMark
	c.cc.cork()
	offer(2)
	if _, err := c.fillBatch(ctx, &marks); err != nil { // takes 2 of a lease of 14:00
		t.Fatal(err)
	}
	clk.add(2 * time.Second)
	offer(3)
	if _, err := c.fillBatch(ctx, &marks); err != nil { // takes 3 of a lease of 15:00
		t.Fatal(err)
	}
	written, err := c.cc.uncork()
	if err == nil {
		t.Fatal("the batch's write did not fail part way")
	}
	c.release(c.settle(marks, written, err))
	h.quotas.settleForTest()
	// One transfer reached the socket, with a credit of 14:00; 15:00 delivered none.
	if n, _, _ := st.Counted(ctx, st.WindowAt("k", clk.now().Add(-time.Hour))); n != 1 {
		t.Fatalf("14:00 counts %d, one of its credits was delivered", n)
	}
	c.kq.mu.Lock()
	left, w := c.kq.left, c.kq.w
	c.kq.mu.Unlock()
	if n, _, _ := st.Counted(ctx, w); n != left {
		t.Fatalf("15:00 counts %d and the replica holds %d of it, none was delivered", n, left)
	}
}

// recConn records what is written to it.
type recConn struct {
	net.Conn
	mu  sync.Mutex
	buf []byte
}

func (c *recConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// A writer whose key's leases are all used by the key's other writers before it gets a credit
// pauses with its delivery still owed and tells the client nothing: contention is not a
// failed quota check (no INTERNAL_ERROR).
func TestLeaseContentionIsAPauseNotAnError(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	h := NewHub(Options{Engine: engine.New(engine.Options{}), Store: st, Now: clk.now, Log: slog.New(slog.DiscardHandler)})
	srv, cli := net.Pipe()
	defer srv.Close()
	defer cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recConn{Conn: srv}
	c := &conn{h: h, ctx: ctx, cc: &corkConn{Conn: rec}, q: newQueue(queueSize{Base: 8}), id: Identity{KeyID: "k"}}
	ended, end := context.WithCancel(context.Background())
	end()
	c.wctx = ended // the pause's wake finds the connection's writing over
	c.kq = h.quotas.attach("k")
	if c.q.Offer([]engine.Item{{R: &engine.Rendered{JSON: []byte(`{"id":"t"}`)}, FilterID: "f"}}) != engine.Queued {
		t.Fatal("not queued")
	}
	// The other writers' leases: each ends bringing this writer nothing, another starts.
	kq := c.kq
	kq.mu.Lock()
	kq.w = st.WindowAt("k", clk.now())
	ch := make(chan struct{})
	kq.leasing = ch
	kq.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.writeBatch(ctx)
	}()
	for ended := false; !ended; {
		select {
		case <-done:
			ended = true
		case <-time.After(time.Millisecond):
			kq.mu.Lock()
			if kq.leasing == ch {
				close(ch)
				ch = make(chan struct{})
				kq.leasing = ch
			}
			kq.mu.Unlock()
		}
	}
	kq.mu.Lock()
	if kq.leasing == ch {
		close(ch)
		kq.leasing = nil
	}
	kq.mu.Unlock()
	rec.mu.Lock()
	out := string(rec.buf)
	rec.mu.Unlock()
	if strings.Contains(out, CodeInternal) {
		t.Fatalf("the client was sent %q on lease contention", out)
	}
	if !c.isPaused() || !c.q.pending() {
		t.Fatalf("paused %v, delivery still owed %v: want both", c.isPaused(), c.q.pending())
	}
}

// The quota check a subscribe makes is bounded as every quota call is: with Redis not
// answering (and no client read timeout), it ends, leaving the check to the writer.
func TestSubscribeQuotaCheckIsBounded(t *testing.T) {
	st := blackholed(t, -1)
	h := NewHub(Options{Engine: engine.New(engine.Options{}), Store: st, Log: slog.New(slog.DiscardHandler)})
	c := &conn{h: h, ctx: context.Background(), q: newQueue(queueSize{Base: 8}), id: Identity{KeyID: "k"}}
	done := make(chan *out, 1)
	go func() { done <- c.checkQuota() }()
	select {
	case o := <-done:
		if o != nil {
			t.Fatalf("a check that could not read Redis queued %+v", o)
		}
	case <-time.After(time.Minute):
		t.Fatal("the subscribe's quota check did not end")
	}
}

// A lost lease the sweep resolves while a new entry of the key takes the op over: the entry's
// retry is answered the recorded grant and spends it, so the sweep's answer (the same grant) is
// not given back as well, which would uncount delivered credits.
func TestLostLeaseTakenOverWhileResolved(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, hook := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 100, Monthly: 1000}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
	ctx := context.Background()
	kq := q.attach("k")
	hook.lose("lease", 1)
	if _, _, _, err := q.take(ctx, kq, "t", 1); err == nil {
		t.Fatal("the take whose lease's reply was lost succeeded")
	}
	q.detach(kq) // the lost op goes to the replica's list

	hold, held := make(chan struct{}), make(chan struct{}, 1)
	hook.mu.Lock()
	hook.hold, hook.held = hold, held
	hook.mu.Unlock()
	resolved := make(chan struct{})
	go func() { q.resolveLost(ctx); close(resolved) }()
	<-held // the sweep's retry is on its way, not yet in Redis
	hook.mu.Lock()
	hook.hold, hook.held = nil, nil
	hook.mu.Unlock()

	kq = q.attach("k") // takes the op over and retries it first
	got, _, _, err := q.take(ctx, kq, "t", 1)
	if err != nil || got != 1 {
		t.Fatal(got, err)
	}
	close(hold)
	<-resolved
	q.detach(kq)
	q.settleForTest()
	if m := monthCounted(t, st, clk.now()); m != got {
		t.Fatalf("the month counts %d, %d delivered", m, got)
	}
}
