package ws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/redisx/redistest"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/engine"
	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
	"github.com/redis/go-redis/v9"
)

// quotaClock is a clock a test moves by hand.
type quotaClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *quotaClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *quotaClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// scriptHook stands between a store and Redis for the quota scripts (EVALSHA with 1 key: a
// lease; with 3: a return): it can hold leases until released, and lose the reply of the
// next calls of a kind after Redis ran them (a timeout after the write).
type scriptHook struct {
	mu       sync.Mutex
	hold     chan struct{} // non-nil: leases wait until it is closed
	held     chan struct{} // told when a lease starts waiting
	loseNext map[string]int
	calls    map[string]int
}

var errReplyLost = errors.New("reply lost (the test's hook)")

func scriptKind(cmd redis.Cmder) string {
	args := cmd.Args()
	if len(args) < 3 || (cmd.Name() != "evalsha" && cmd.Name() != "eval") {
		return ""
	}
	switch fmt.Sprint(args[2]) {
	case "1":
		return "lease"
	case "3":
		return "return"
	}
	return ""
}

func (h *scriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *scriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *scriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		kind := scriptKind(cmd)
		if kind == "" {
			return next(ctx, cmd)
		}
		h.mu.Lock()
		hold, held := h.hold, h.held
		h.mu.Unlock()
		if kind == "lease" && hold != nil {
			held <- struct{}{}
			<-hold
		}
		err := next(ctx, cmd)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.calls == nil {
			h.calls = map[string]int{}
		}
		h.calls[kind]++
		if err == nil && h.loseNext[kind] > 0 && cmd.Err() == nil {
			h.loseNext[kind]--
			cmd.SetErr(errReplyLost)
			return errReplyLost
		}
		return err
	}
}

func (h *scriptHook) lose(kind string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.loseNext == nil {
		h.loseNext = map[string]int{}
	}
	h.loseNext[kind] = n
}

// hookedStore is a quota store on a fresh Redis prefix, its scripts going through a hook.
// The scripts name their period by clock (the test's), not by Redis's.
func hookedStore(t *testing.T, clock func() time.Time) (*store.Store, *scriptHook) {
	t.Helper()
	_, url := redistest.Client(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	h := &scriptHook{}
	rdb.AddHook(h)
	return store.New(rdb, fmt.Sprintf("qx%d:", rand.Uint64()), nil, store.PeriodClock(clock)), h
}

// settle waits for q's leases taken ahead and returns under way.
func (q *quotas) settleForTest() { q.fetches.Wait(); q.waitReturns(context.Background()) }

// takeAll takes credits one at a time from kq until it is refused, and returns how many.
func takeAll(t *testing.T, q *quotas, kq *keyQuota) (n int64, r refusal) {
	t.Helper()
	for {
		got, _, r, err := q.take(context.Background(), kq, "t", 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.limitType != "" {
			return n, r
		}
		n += got
		q.settleForTest()
	}
}

// A refusal read from Redis never stands past its period: an hourly one ends with the hour
// even when the recheck interval is longer, and a monthly one is asked again at the next hour
// (and whenever the recheck is due), not kept until the month ends, so credits given back
// meanwhile are granted.
func TestRefusalEndsWithItsPeriod(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 59, 30, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 10, Monthly: 15}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, 2*time.Hour, nil)
	kq := q.attach("k")
	n, r := takeAll(t, q, kq)
	hourEnd := time.Date(2099, 3, 10, 15, 0, 0, 0, time.UTC)
	if n != 10 || r.limitType != store.LimitHourly || !r.reset.Equal(hourEnd) || r.until.After(hourEnd) {
		t.Fatalf("took %d, refused %+v; want 10 and an hourly refusal standing no later than %v", n, r, hourEnd)
	}
	clk.add(30 * time.Second) // the hour turns
	n, r = takeAll(t, q, kq)
	if n != 5 || r.limitType != store.LimitMonthly || r.until.After(hourEnd.Add(time.Hour)) {
		t.Fatalf("next hour took %d, refused %+v; want the month's 5 left, then a monthly refusal standing no later than the hour's end", n, r)
	}
	// Credits of the month given back (another replica's) are granted once the hour turns,
	// though the month has not ended.
	if err := st.Return(context.Background(), st.WindowAt("k", clk.now()), 3, store.Op{Replica: "other", Seq: 1}); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Hour)
	if n, _ = takeAll(t, q, kq); n != 3 {
		t.Fatalf("after the month's credits came back took %d, want 3", n)
	}
}

// Two replicas share a key: one holds credits it does not use and its last connection ends,
// the other is refused meanwhile. The refusal stands for the recheck interval only; then the
// refused replica asks Redis again and gets the credits given back: together they deliver
// exactly the limit.
func TestRefusedReplicaGetsCreditsBackAfterTheRecheck(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 40, Monthly: 1000}
	limits := func(string) store.Limits { return lim }
	a := newQuotas(st, limits, 16, clk.now, time.Second, nil)
	b := newQuotas(st, limits, 16, clk.now, time.Second, nil)
	ka, kb := a.attach("k"), b.attach("k")
	if got, _, _, err := a.take(context.Background(), ka, "t", 1); err != nil || got != 1 {
		t.Fatalf("a took %d %v", got, err)
	}
	nb, r := takeAll(t, b, kb)
	if r.limitType == "" || nb != 40-16 {
		t.Fatalf("b took %d before its refusal %+v; want the %d a does not hold", nb, r, 40-16)
	}
	a.detach(ka) // a's last connection ends: its 15 go back
	a.settleForTest()
	if got, _, r, _ := b.take(context.Background(), kb, "t", 1); got != 0 || r.limitType == "" {
		t.Fatalf("b took %d within the recheck interval; the refusal stands until then", got)
	}
	clk.add(time.Second)
	more, _ := takeAll(t, b, kb)
	if 1+nb+more != 40 {
		t.Fatalf("delivered %d (a 1, b %d then %d), want exactly the limit 40", 1+nb+more, nb, more)
	}
}

// A replica refused while holding no credit flags the key; a replica holding credits of it, its
// connection open but idle, gives them back at its next sweep, and the refused one gets them at
// its recheck: exactly the limit is used, nothing is stranded on the idle replica.
func TestStarvedKeyCreditsComeBackFromAnIdleReplica(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 40, Monthly: 1000}
	limits := func(string) store.Limits { return lim }
	a := newQuotas(st, limits, 16, clk.now, time.Second, nil)
	b := newQuotas(st, limits, 16, clk.now, time.Second, nil)
	ka, kb := a.attach("k"), b.attach("k")
	ctx := context.Background()
	if got, _, _, err := a.take(ctx, ka, "t", 1); err != nil || got != 1 {
		t.Fatalf("a took %d %v", got, err)
	}
	a.sweep(ctx) // nobody starved: a keeps its credits
	if ka.left != 15 {
		t.Fatalf("a holds %d after a sweep with nobody refused, want 15", ka.left)
	}
	nb, _ := takeAll(t, b, kb)
	a.sweep(ctx)
	a.settleForTest()
	if ka.left != 0 {
		t.Fatalf("a holds %d after b was refused holding none, want 0", ka.left)
	}
	clk.add(time.Second)
	more, _ := takeAll(t, b, kb)
	if 1+nb+more != 40 {
		t.Fatalf("delivered %d (a 1, b %d then %d), want exactly the limit 40", 1+nb+more, nb, more)
	}
	b.detach(kb)
	b.settleForTest()
	checkCounted(t, st, clk.now(), lim, 40)
}

// checkCounted fails unless Redis counts exactly used credits of key k's hour at now.
func checkCounted(t *testing.T, st *store.Store, now time.Time, lim store.Limits, used int64) {
	t.Helper()
	h, _, err := st.Counted(context.Background(), st.WindowAt("k", now))
	if err != nil {
		t.Fatal(err)
	}
	if h != used {
		t.Fatalf("Redis counts %d credits used, the writers used %d", h, used)
	}
}

// A lease whose reply is lost after Redis counted it is retried with its op: the key is
// charged once, and what the replica then holds is what Redis counts.
func TestLostLeaseReplyChargesOnce(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, hook := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 100, Monthly: 1000}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
	kq := q.attach("k")
	ctx := context.Background()
	hook.lose("lease", 1)
	if _, _, _, err := q.take(ctx, kq, "t", 1); !errors.Is(err, errReplyLost) {
		t.Fatalf("take with the lease's reply lost: %v", err)
	}
	got, _, _, err := q.take(ctx, kq, "t", 1)
	if err != nil || got != 1 || kq.left != 15 {
		t.Fatalf("retry took %d (%v), holds %d; want 1 and 15 of the first lease", got, err, kq.left)
	}
	q.detach(kq)
	q.settleForTest()
	checkCounted(t, st, clk.now(), lim, 1)
}

// A return whose reply is lost after Redis applied it is retried with its op, which Redis
// ignores: the retry creates no credit.
func TestLostReturnReplyCreatesNoCredit(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, hook := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 100, Monthly: 1000}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
	kq := q.attach("k")
	if got, _, _, err := q.take(context.Background(), kq, "t", 4); err != nil || got != 4 {
		t.Fatalf("took %d %v", got, err)
	}
	hook.lose("return", 1)
	q.detach(kq)
	q.settleForTest()
	if hook.calls["return"] < 2 {
		t.Fatalf("the return was called %d times, want a retry", hook.calls["return"])
	}
	checkCounted(t, st, clk.now(), lim, 4)
}

// Writers needing credits while the key's lease is under way wait for it (bounded by their
// context) and are served from it or the next one: none is refused or loses its deliveries.
func TestWritersWaitForTheLeaseUnderWay(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, hook := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 100, Monthly: 1000}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
	kq := q.attach("k")
	hook.mu.Lock()
	hook.hold, hook.held = make(chan struct{}), make(chan struct{}, 16)
	hook.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type res struct {
		got int64
		r   refusal
		err error
	}
	results := make(chan res, 6)
	take := func(want int64) {
		got, _, r, err := q.take(ctx, kq, "t", want)
		results <- res{got, r, err}
	}
	go take(4)
	<-hook.held // the first writer's lease is under way
	for range 5 {
		go take(4)
	}
	// A writer whose own bound ends while it waits gives up with an error (its deliveries stay
	// owed and it pauses), not a refusal.
	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	if _, _, r, err := q.take(short, kq, "t", 1); !errors.Is(err, context.Canceled) || r.limitType != "" {
		t.Fatalf("a writer whose wait was cut: %+v %v", r, err)
	}
	hook.mu.Lock()
	close(hook.hold)
	hook.hold = nil
	hook.mu.Unlock()
	var total int64
	for range 6 {
		x := <-results
		if x.err != nil || x.r.limitType != "" || x.got != 4 {
			t.Fatalf("a waiting writer got %d, %+v, %v; want its 4 credits", x.got, x.r, x.err)
		}
		total += x.got
	}
	q.detach(kq)
	q.settleForTest()
	checkCounted(t, st, clk.now(), lim, total)
}

// cutConn takes the first limit bytes written to it and fails the write there.
type cutConn struct {
	net.Conn
	limit int
}

func (c *cutConn) Write(p []byte) (int, error) {
	if len(p) > c.limit {
		return c.limit, errors.New("connection reset (the test's cut)")
	}
	return len(p), nil
}

// A batch whose write fails part way gives back, in its settle, the credits of the transfers
// it took them for and did not write (they stay owed, charged when sent), as well as those it
// did not reach: the replica holds the lease less only what reached the socket.
func TestSettleGivesBackCreditsOfUnwrittenTransfers(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	h := NewHub(Options{Engine: engine.New(engine.Options{}), Store: st, Now: clk.now, Log: slog.New(slog.DiscardHandler)})
	srv, cli := net.Pipe()
	defer srv.Close()
	defer cli.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each message is a 2-byte frame header and its payload: the cut lets two through whole.
	frame := 2 + len(transferHead) + len(`"f"`) + len(transferMid) + len(`{"id":"t"}`) + len(transferTail)
	c := &conn{h: h, ctx: ctx, cc: &corkConn{Conn: &cutConn{Conn: srv, limit: 2*frame + 10}}, q: newQueue(queueSize{Base: 8}), id: Identity{KeyID: "k"}}
	c.kq = h.quotas.attach("k")
	var items []engine.Item
	for i := range 5 {
		items = append(items, engine.Item{R: &engine.Rendered{Off: int64(i), JSON: []byte(`{"id":"t"}`)}, FilterID: "f"})
	}
	for _, it := range items {
		if c.q.Offer([]engine.Item{it}) != engine.Queued {
			t.Fatal("not queued")
		}
	}
	n, err := c.writeBatch(ctx)
	if n != 5 || err == nil {
		t.Fatalf("batch of %d (%v), want 5 failing part way", n, err)
	}
	if c.kq.left != 16-2 {
		t.Fatalf("the replica holds %d of its lease of 16 after 2 transfers reached the socket, want 14", c.kq.left)
	}
}

// Credits a batch gives back after the key was found refused meanwhile (the batch held the
// last of them) are served: the refusal does not stand over credits the replica holds.
func TestCreditsGivenBackOutrankARefusal(t *testing.T) {
	clk := &quotaClock{t: time.Date(2099, 3, 10, 14, 10, 0, 0, time.UTC)}
	st, _ := hookedStore(t, clk.now)
	lim := store.Limits{Hourly: 16, Monthly: 1000}
	q := newQuotas(st, func(string) store.Limits { return lim }, 16, clk.now, time.Second, nil)
	kq := q.attach("k")
	ctx := context.Background()
	got, hour, _, err := q.take(ctx, kq, "t", 16)
	if err != nil || got != 16 {
		t.Fatalf("took %d %v", got, err)
	}
	q.settleForTest() // the lease taken ahead is refused: the key is refused here
	if _, _, r, _ := q.take(ctx, kq, "t", 1); r.limitType == "" {
		t.Fatal("the key holds nothing and Redis has nothing left: want a refusal")
	}
	q.giveBack(kq, hour, 10) // the batch wrote 6
	if got, _, r, err := q.take(ctx, kq, "t", 10); err != nil || got != 10 || r.limitType != "" {
		t.Fatalf("after 10 came back took %d, %+v, %v; want the 10", got, r, err)
	}
}
