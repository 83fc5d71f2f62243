package ws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// quotas hands out a key's stream quota on this replica from leases taken in Redis, so most
// deliveries cost no Redis call and the count is shared by every replica. Credits leased and
// not used go back to Redis when the key's last connection on the replica ends, when the hour
// turns, at shutdown, and when another replica holding none of the key's credits was refused
// (sweep): so what one replica holds does not keep the key refused on another. A refusal found
// in Redis is trusted for at most recheck (and never past its period's end), then Redis is
// asked again. Redis's clock decides a key's period (store.Lease answers it): the replica's
// quota clock (now) is its own set by the time Redis answered with, so a replica whose clock
// is off still turns its hours with Redis.
type quotas struct {
	st      *store.Store
	limits  func(tier string) store.Limits
	lease   int64
	clock   func() time.Time
	skew    atomic.Int64  // Redis's clock less clock at the last answer, in ns
	recheck time.Duration // how long a refusal read from Redis stands before Redis is asked again
	timeout time.Duration // bounds each lease and return call
	log     *slog.Logger
	// replica names this process's leases and returns in Redis, seq numbers them: a call
	// retried after its reply was lost reuses its op, so Redis counts it once (store.Op).
	replica string
	seq     atomic.Int64
	// rets are the returns waiting for the replica's one return worker (running while there
	// are any): the worker sends them in the order queued, which is their ops' seq order (a
	// return numbered below one applied is ignored in Redis), and no return holds a goroutine
	// or a lock of its own while Redis is slow. retIdle is closed when the worker stops with
	// none left (a channel, not a WaitGroup: returns may still be queued while a shutdown
	// waits, which a WaitGroup's Add during its Wait does not allow); retCtx ends the worker's
	// calls once a shutdown's time is up.
	retMu      sync.Mutex
	rets       []pendingReturn
	retRunning bool
	retIdle    chan struct{}
	retCtx     context.Context
	retCancel  context.CancelFunc

	mu   sync.Mutex
	keys map[string]*keyQuota
	// lost are the leases whose reply was lost of keys whose entry was let go since (by key
	// id): the key's next entry takes its lost op up, or the sweep runs it again (the script
	// answers the recorded grant without counting it again) and gives the grant back.
	lost map[string]lostLease

	// fetches tracks the leases taken ahead in the background, so returnAll gives back what
	// they bring; closed (set under
	// fetchMu, so a new one cannot race the wait) stops tracking new ones once returnAll has
	// begun (they then run in the caller), and is read without the lock on the writers' path.
	fetchMu sync.Mutex
	closed  atomic.Bool
	fetches sync.WaitGroup
}

type keyQuota struct {
	keyID string
	mu    sync.Mutex
	w     store.Window
	left  int64
	// size is the next lease: it doubles (up to maxLeaseFactor times the base) while each
	// lease is spent within leaseTurn, so a key receiving thousands of transfers a second
	// costs a few Redis calls a second rather than one per base lease, and falls back to the
	// base when the key slows down, so little sits leased on one replica.
	size   int64
	leased time.Time
	// denied is the window type Redis refused, reset when that window ends, until when the
	// refusal stands on this replica without asking Redis again (at most recheck, never past
	// reset nor the hour).
	denied       string
	reset, until time.Time
	// leasing is closed when the lease under way ends (nil: none): there is at most one per key
	// on a replica, and a writer that needs credits waits for it (bounded) instead of leasing
	// again or giving up its deliveries. leaseErr is how the last lease failed.
	leasing  chan struct{}
	leaseErr error
	// lost is the op of a lease whose reply was lost (0: none): the key's next lease, in
	// whatever hour, retries it, so Redis does not count it twice; a grant of a past hour is
	// then given back to that hour.
	lost int64
	tier string // the tier of the last lease, which a lost one is retried with
	// conns is how many of the key's connections this replica serves; the last one's end
	// gives back what the key holds.
	conns int
}

// refusal is a quota found spent: the window type, when it resets (told to the client), and
// until when the replica trusts it without asking Redis (what the queue drops deliveries until).
type refusal struct {
	limitType    string
	reset, until time.Time
}

// pendingReturn is a return queued for the return worker.
type pendingReturn struct {
	keyID string
	w     store.Window
	n     int64
	op    store.Op
}

// lostLease is a lease whose reply was lost, of a key whose entry was let go.
type lostLease struct {
	seq  int64
	tier string
}

func newQuotas(st *store.Store, limits func(string) store.Limits, lease int64, now func() time.Time, recheck time.Duration, log *slog.Logger) *quotas {
	var b [8]byte
	_, _ = rand.Read(b[:])
	if log == nil {
		log = slog.Default()
	}
	retCtx, retCancel := context.WithCancel(context.Background())
	return &quotas{st: st, limits: limits, lease: lease, clock: now, recheck: recheck, timeout: quotaCallTimeout, log: log,
		replica: hex.EncodeToString(b[:]), keys: map[string]*keyQuota{}, lost: map[string]lostLease{},
		retCtx: retCtx, retCancel: retCancel}
}

// now is the quota clock: the replica's clock set by Redis's at the last answer.
func (q *quotas) now() time.Time { return q.clock().Add(time.Duration(q.skew.Load())) }

// heard sets the quota clock by Redis's time at, read by a call that has just answered.
func (q *quotas) heard(at time.Time) { q.skew.Store(int64(at.Sub(q.clock()))) }

const (
	maxLeaseFactor = 64
	leaseTurn      = time.Second
	// quotaCallTimeout bounds one lease or return call; a writer waits at most fillRounds of
	// them for credits before it pauses with its deliveries still owed.
	quotaCallTimeout = 2 * time.Second
	fillRounds       = 3
	returnAttempts   = 3
)

// errLeaseContended: the leases a writer waited for were all used by the key's other writers
// before it got a credit; it pauses and tries again, its deliveries still owed.
var errLeaseContended = errors.New("quota leases taken by the key's other writers")

// nextLease is the size of kq's next lease at now (the replica's own clock: a rate, not a
// period, so it is not moved by the quota clock's setting).
func (q *quotas) nextLease(kq *keyQuota, now time.Time) int64 {
	switch {
	case kq.size == 0 || now.Sub(kq.leased) >= leaseTurn:
		kq.size = q.lease
	case kq.size < q.lease*maxLeaseFactor:
		kq.size *= 2
	}
	kq.leased = now
	return kq.size
}

// take uses up to want credits of kq's key at once: a batch's transfers take theirs under one
// lock, and what the batch does not use goes back through giveBack. When a limit is reached it
// returns no credit and the refusal.
func (q *quotas) take(ctx context.Context, kq *keyQuota, tier string, want int64) (got int64, hour time.Time, r refusal, err error) {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if r, err = q.fill(ctx, kq, tier); r.limitType != "" || err != nil {
		return 0, time.Time{}, r, err
	}
	got = min(max(want, 1), kq.left)
	kq.left -= got
	if kq.left <= kq.size/2 && kq.leasing == nil && q.startFetch() {
		kq.leasing = make(chan struct{})
		go q.prefetch(kq, tier, q.nextLease(kq, q.clock()), kq.left > 0)
	}
	q.returnIfIdle(kq)
	return got, kq.w.Hour, refusal{}, nil
}

// giveBack returns n credits take granted in hour that a batch did not use; when the hour has
// turned meanwhile they go back to Redis, as a lease of the last hour does.
func (q *quotas) giveBack(kq *keyQuota, hour time.Time, n int64) {
	if n <= 0 {
		return
	}
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.w.Hour.Equal(hour) {
		// Credits held again: a refusal found while a batch held them no longer stands.
		kq.left += n
		kq.denied = ""
		q.returnIfIdle(kq)
		return
	}
	q.giveUp(kq, q.st.WindowAt(kq.keyID, hour), n)
}

// returnIfIdle gives kq's unused credits back to Redis when nothing on this replica will use
// them: returnAll has begun (a writer still running after the shutdown's wait), or the key's
// last connection has ended (a writer or lease finishing after it) (kq.mu held).
func (q *quotas) returnIfIdle(kq *keyQuota) {
	if kq.left > 0 && (kq.conns <= 0 || q.closed.Load()) {
		n := kq.left
		kq.left = 0
		q.giveUp(kq, kq.w, n)
	}
}

// giveUp returns n credits of w to Redis in the background: queued for the return worker,
// which sends it as one op retried a few times (a retry of an applied return is a no-op). It
// never waits on Redis, so it may be called with any lock held.
func (q *quotas) giveUp(kq *keyQuota, w store.Window, n int64) {
	if n <= 0 {
		return
	}
	q.retMu.Lock()
	defer q.retMu.Unlock()
	q.rets = append(q.rets, pendingReturn{kq.keyID, w, n, store.Op{Replica: q.replica, Seq: q.seq.Add(1)}})
	if !q.retRunning {
		q.retRunning = true
		q.retIdle = make(chan struct{})
		go q.returnWorker()
	}
}

// returnWorker sends the queued returns in order until none is left.
func (q *quotas) returnWorker() {
	for {
		q.retMu.Lock()
		if len(q.rets) == 0 {
			q.retRunning = false
			close(q.retIdle)
			q.retMu.Unlock()
			return
		}
		r := q.rets[0]
		q.rets[0] = pendingReturn{}
		q.rets = q.rets[1:]
		q.retMu.Unlock()
		q.returnNow(r)
	}
}

func (q *quotas) returnNow(r pendingReturn) {
	var err error
	for range returnAttempts {
		ctx, cancel := context.WithTimeout(q.retCtx, q.timeout)
		err = q.st.Return(ctx, r.w, r.n, r.op)
		cancel()
		if err == nil || q.retCtx.Err() != nil {
			break
		}
	}
	if err != nil {
		// Never kept to spend: the return may have been applied. They count as used until the
		// period ends, which refuses the key early by at most n, and never grants past the limit.
		q.log.Warn("returning stream quota credits failed; they stay counted until the period ends", "key", r.keyID, "credits", r.n, "error", err)
	}
}

// prime makes sure the key holds a credit on this replica (or is known to be refused), leasing
// when it holds none, without using it: a writer primes before it starts a batch, so it does
// not wait on Redis with a batch (and a ping) held back.
func (q *quotas) prime(ctx context.Context, kq *keyQuota, tier string) error {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	_, err := q.fill(ctx, kq, tier)
	q.returnIfIdle(kq)
	return err
}

// spent reports, without taking a credit, whether kq's key's quota is spent: from what this
// replica knows (a refusal still standing, or a credit held) or else one read of the counts in
// Redis, whose refusal is then kept as fill keeps one. A connection checks it as it subscribes
// (see conn.checkQuota). The read is made without kq.mu, so the key's writers do not wait on it
// for their credits; what changed meanwhile is looked at again once the lock is taken back (a
// credit leased by a writer says the read is stale: its lease was granted after it).
func (q *quotas) spent(ctx context.Context, kq *keyQuota, tier string) (refusal, error) {
	now := q.now()
	if r, known := q.known(kq, now); known {
		return r, nil
	}
	g, err := q.st.Spent(ctx, kq.keyID, q.limits(tier))
	if err != nil {
		return refusal{}, err
	}
	q.heard(g.At)
	if g.Limit == "" {
		return refusal{}, nil
	}
	kq.mu.Lock()
	defer kq.mu.Unlock()
	now = q.now() // the read took time: the hour may have turned meanwhile
	q.turn(kq, now)
	if r, known := kq.standing(now); known {
		return r, nil
	}
	if kq.left > 0 || !kq.w.Hour.Equal(g.W.Hour) {
		return refusal{}, nil // a credit held, or the refusal read is of a period now ended
	}
	q.deny(kq, g.W, g.Limit, now)
	r, _ := kq.standing(now)
	return r, nil
}

// known answers spent from what the replica knows of the key (kq) at now: a refusal still
// standing, or a credit held; known false when Redis must be read.
func (q *quotas) known(kq *keyQuota, now time.Time) (r refusal, known bool) {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if !within(kq.w, now) {
		return refusal{}, false
	}
	if r, ok := kq.standing(now); ok {
		return r, true
	}
	return refusal{}, kq.left > 0
}

// standing is the refusal kq trusts at now, if any (kq.mu held).
func (kq *keyQuota) standing(now time.Time) (refusal, bool) {
	if kq.denied != "" && now.Before(kq.until) {
		return refusal{kq.denied, kq.reset, kq.until}, true
	}
	return refusal{}, false
}

// deny records that Redis refused kq's key in w (window type lt) at now: trusted for recheck,
// never past the window's end (kq.mu held).
func (q *quotas) deny(kq *keyQuota, w store.Window, lt string, now time.Time) {
	kq.denied, kq.reset = lt, w.HourEnd
	if lt == store.LimitMonthly {
		kq.reset = w.MonthEnd
	}
	kq.until = now.Add(q.recheck)
	if kq.until.After(kq.reset) {
		kq.until = kq.reset
	}
	if kq.until.After(w.HourEnd) {
		kq.until = w.HourEnd // the hour's turn reads Redis again (turn clears the mark too)
	}
}

// attach counts one more connection of keyID on this replica and returns the key's entry.
func (q *quotas) attach(keyID string) *keyQuota {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.entry(keyID)
	kq.mu.Lock()
	kq.conns++
	kq.mu.Unlock()
	return kq
}

// detach counts one connection of kq's key less (its writer stopped); the last one's end gives
// back what the key holds and lets the entry go once nothing is under way for it.
func (q *quotas) detach(kq *keyQuota) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq.mu.Lock()
	defer kq.mu.Unlock()
	kq.conns--
	if kq.conns > 0 {
		return
	}
	kq.size = 0 // a later connection starts from the base lease
	q.returnIfIdle(kq)
	if kq.leasing == nil && q.keys[kq.keyID] == kq {
		q.drop(kq)
	}
}

// drop lets kq's entry go, keeping its lost lease, if any, for the sweep (q.mu, kq.mu held).
func (q *quotas) drop(kq *keyQuota) {
	delete(q.keys, kq.keyID)
	if kq.lost != 0 {
		q.lost[kq.keyID] = lostLease{kq.lost, kq.tier}
		kq.lost = 0
	}
}

// key is keyID's entry, made (with no connection counted) when there is none.
func (q *quotas) key(keyID string) *keyQuota {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.entry(keyID)
}

// entry is keyID's entry, made when there is none: a new one takes up the key's lease whose
// reply was lost, so it is retried before the key leases again (q.mu held).
func (q *quotas) entry(keyID string) *keyQuota {
	kq := q.keys[keyID]
	if kq == nil {
		kq = &keyQuota{keyID: keyID}
		if l, ok := q.lost[keyID]; ok {
			kq.lost, kq.tier = l.seq, l.tier
			delete(q.lost, keyID)
		}
		q.keys[keyID] = kq
	}
	return kq
}

// turn moves kq to now's hour: what is left of the last one goes back to Redis (a lease belongs
// to its hour), and a refusal of the last hour no longer stands (kq.mu held).
func (q *quotas) turn(kq *keyQuota, now time.Time) {
	if within(kq.w, now) {
		return
	}
	old := kq.w
	n := kq.left
	kq.w, kq.left, kq.denied = q.st.WindowAt(kq.keyID, now), 0, ""
	q.giveUp(kq, old, n)
}

// fill makes sure kq holds a credit or a standing refusal: it leases when it holds none, or
// waits for the lease under way (kq.mu held; let go while waiting). The wait is bounded: each
// lease call by q.timeout, and at most fillRounds of them, after which the writer pauses with
// its deliveries still owed (errLeaseContended); ctx ends it too.
func (q *quotas) fill(ctx context.Context, kq *keyQuota, tier string) (refusal, error) {
	for round := 0; ; round++ {
		now := q.now()
		q.turn(kq, now)
		if r, ok := kq.standing(now); ok {
			return r, nil
		}
		if kq.left > 0 {
			return refusal{}, nil
		}
		if round > 0 && kq.leaseErr != nil {
			return refusal{}, kq.leaseErr
		}
		if round >= fillRounds {
			return refusal{}, errLeaseContended
		}
		if kq.leasing == nil {
			kq.leasing = make(chan struct{})
			q.runLease(kq, tier, q.nextLease(kq, q.clock()), false)
			continue
		}
		ch := kq.leasing
		kq.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		kq.mu.Lock()
		if err := ctx.Err(); err != nil {
			return refusal{}, err
		}
	}
}

// runLease takes a lease of want credits for kq (kq.leasing set by the caller; kq.mu held, and
// let go during the call). holding says kq holds credits still (a lease taken ahead), so a
// refusal does not flag the key starved. A lease whose reply is lost is retried with its op
// by the key's next lease, in whatever hour, so Redis never counts it twice; Redis answers the
// period it counted the lease in, and a grant of another period than kq's goes back to it.
func (q *quotas) runLease(kq *keyQuota, tier string, want int64, holding bool) {
	seq := kq.lost
	if seq == 0 {
		seq = q.seq.Add(1)
	}
	kq.tier = tier
	kq.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	g, err := q.st.Lease(ctx, kq.keyID, q.limits(tier), want, store.Op{Replica: q.replica, Seq: seq}, holding)
	cancel()
	if err == nil {
		q.heard(g.At) // before waiting for the lock, which would read as Redis's clock lagging
	}
	kq.mu.Lock()
	close(kq.leasing)
	kq.leasing, kq.leaseErr = nil, err
	if err != nil {
		kq.lost = seq
		return
	}
	kq.lost = 0
	if g.W.Hour.After(kq.w.Hour) {
		// Redis's hour turned before the replica's: what kq holds goes back to its hour.
		old, n := kq.w, kq.left
		kq.w, kq.left, kq.denied = g.W, 0, ""
		q.giveUp(kq, old, n)
	}
	switch {
	case !kq.w.Hour.Equal(g.W.Hour):
		q.giveUp(kq, g.W, g.N) // a past hour's (the hour turned meanwhile, or a lost lease's retry)
	case g.Limit != "":
		if kq.left == 0 {
			q.deny(kq, g.W, g.Limit, q.now())
		}
	default:
		kq.left += g.N
		kq.denied = ""
	}
}

// resolveLost runs again the leases whose reply was lost of keys whose entry was let go, and
// gives back what they granted: the script answers a recorded grant without counting it again
// (one not recorded never reached Redis, and is counted then given back). A failure keeps it
// for the next sweep.
func (q *quotas) resolveLost(ctx context.Context) {
	q.mu.Lock()
	lost := make(map[string]lostLease, len(q.lost))
	for id, l := range q.lost {
		lost[id] = l
	}
	q.mu.Unlock()
	for id, l := range lost {
		cctx, cancel := context.WithTimeout(ctx, q.timeout)
		g, err := q.st.Lease(cctx, id, q.limits(l.tier), 1, store.Op{Replica: q.replica, Seq: l.seq}, true)
		cancel()
		if err != nil {
			return
		}
		q.mu.Lock()
		mine := q.lost[id] == l
		if mine {
			delete(q.lost, id)
		}
		q.mu.Unlock()
		if mine {
			q.giveUp(&keyQuota{keyID: id}, g.W, g.N)
		}
		// Otherwise a new entry of the key took the op over meanwhile: its lease retries it,
		// is answered the same recorded grant and spends it, so giving it back here too would
		// uncount credits that are delivered.
	}
}

// startFetch registers a lease taken ahead in the background; false once returnAll has begun.
func (q *quotas) startFetch() bool {
	q.fetchMu.Lock()
	defer q.fetchMu.Unlock()
	if q.closed.Load() {
		return false
	}
	q.fetches.Add(1)
	return true
}

// prefetch takes the key's next lease before the current one is spent (or as the batch that
// took the last credit is written: holding false, so a refusal flags the key starved). The script never
// grants past either limit, so credits leased ahead are still within the quota; when the
// limit is reached it grants nothing and the key is refused once what it holds is spent.
func (q *quotas) prefetch(kq *keyQuota, tier string, want int64, holding bool) {
	defer q.fetches.Done()
	kq.mu.Lock()
	defer kq.mu.Unlock()
	q.runLease(kq, tier, want, holding)
	q.returnIfIdle(kq)
}

// ready reports whether take would answer for the key (kq) without waiting on Redis: it holds
// a credit on this replica, or a refusal stands.
func (q *quotas) ready(kq *keyQuota) bool {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	now := q.now()
	if !within(kq.w, now) {
		return false
	}
	_, refused := kq.standing(now)
	return refused || kq.left > 0
}

// within reports whether t is in w's hour (a zero window holds nothing).
func within(w store.Window, t time.Time) bool {
	return !t.Before(w.Hour) && t.Before(w.HourEnd)
}

// sweep gives back the credits this replica holds of every key another replica was refused
// while holding none (the key's starved flag in Redis), so they are not kept from it until the
// hour ends: one pipelined read a sweep, of the keys holding credits only. The key's next lease
// here starts again from the base size. Credits held past their hour (no delivery nor
// connection end turned the key) go back to their period, before its month's count expires;
// leases whose reply was lost, of entries let go, are resolved (resolveLost). It also lets go
// the entries of keys with no connection and nothing held.
func (q *quotas) sweep(ctx context.Context) {
	q.resolveLost(ctx)
	now := q.now()
	var held []*keyQuota
	var ws []store.Window
	q.mu.Lock()
	for id, kq := range q.keys {
		kq.mu.Lock()
		switch {
		case kq.left > 0 && within(kq.w, now):
			held = append(held, kq)
			ws = append(ws, kq.w)
		case kq.left > 0:
			// Held past its hour (no delivery nor connection end turned it): the credits go
			// back to their period now, before its month's count expires with them.
			q.turn(kq, now)
		}
		if kq.conns <= 0 && kq.left == 0 && kq.leasing == nil && q.keys[id] == kq {
			q.drop(kq)
		}
		kq.mu.Unlock()
	}
	q.mu.Unlock()
	starved, err := q.st.Starved(ctx, ws)
	if err != nil {
		return // the next sweep reads them again
	}
	for i, kq := range held {
		if !starved[i] {
			continue
		}
		kq.mu.Lock()
		if kq.w.Hour.Equal(ws[i].Hour) && kq.left > 0 {
			n := kq.left
			kq.left, kq.size = 0, 0
			q.giveUp(kq, kq.w, n)
		}
		kq.mu.Unlock()
	}
}

// returnAll gives back every lease not used (on shutdown), after the leases being taken in
// the background have arrived (one landing later would stay counted in Redis, unused), and
// waits for the returns queued. ctx bounds it: once it ends the returns not sent are given up
// (their credits stay counted until their period ends) and it returns.
func (q *quotas) returnAll(ctx context.Context) {
	q.fetchMu.Lock()
	q.closed.Store(true)
	q.fetchMu.Unlock()
	if !waitCtx(ctx, q.fetches.Wait) {
		q.retCancel()
		return
	}
	q.mu.Lock()
	keys := make([]*keyQuota, 0, len(q.keys))
	for _, kq := range q.keys {
		keys = append(keys, kq)
	}
	q.mu.Unlock()
	for _, kq := range keys {
		kq.mu.Lock()
		n, w := kq.left, kq.w
		kq.left = 0
		q.giveUp(kq, w, n)
		kq.mu.Unlock()
	}
	if !q.waitReturns(ctx) {
		q.retCancel()
	}
}

// waitReturns waits until the return worker has sent every return queued (those queued while
// it waits too); false when ctx ends first.
func (q *quotas) waitReturns(ctx context.Context) bool {
	for {
		q.retMu.Lock()
		running, idle := q.retRunning, q.retIdle
		q.retMu.Unlock()
		if !running {
			return true
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}

// waitCtx runs wait until it returns or ctx ends; false when ctx ended first (wait's goroutine
// then ends with it).
func waitCtx(ctx context.Context, wait func()) bool {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		select {
		case <-done: // both ready: what was waited for has ended
			return true
		default:
			return false
		}
	}
}
