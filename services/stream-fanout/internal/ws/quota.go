package ws

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/services/stream-fanout/internal/store"
)

// quotas hands out a key's stream quota on this replica from leases taken in Redis, so most
// deliveries cost no Redis call and the count is shared by every replica.
type quotas struct {
	st     *store.Store
	limits func(tier string) store.Limits
	lease  int64
	now    func() time.Time

	mu   sync.Mutex
	keys map[string]*keyQuota

	// fetches tracks the leases being taken in the background, so returnAll gives back
	// what they bring; closed (set under fetchMu, so a new fetch cannot race the wait) stops
	// new ones once returnAll has begun, and is read without the lock on the writers' path.
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
	denied string    // the window type found exhausted
	until  time.Time // denied holds until then
	// fetching is set while the next lease is taken in the background: a key's writers spend
	// what is left meanwhile instead of queueing on this lock behind a Redis round trip.
	fetching bool
}

func newQuotas(st *store.Store, limits func(string) store.Limits, lease int64, now func() time.Time) *quotas {
	return &quotas{st: st, limits: limits, lease: lease, now: now, keys: map[string]*keyQuota{}}
}

const (
	maxLeaseFactor = 64
	leaseTurn      = time.Second
)

// nextLease is the size of kq's next lease at now.
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

// take uses up to want credits of keyID's quota (kq, its entry) at once: a batch's transfers
// take theirs under one lock, and what the batch does not use goes back through giveBack. When
// a limit is reached it returns no credit, the window type and when it resets.
func (q *quotas) take(ctx context.Context, kq *keyQuota, keyID, tier string, want int64) (got int64, hour time.Time, limitType string, reset time.Time, err error) {
	now := q.now()
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if limitType, reset, err = q.fill(ctx, kq, keyID, tier, now); limitType != "" || err != nil {
		return 0, time.Time{}, limitType, reset, err
	}
	got = min(max(want, 1), kq.left)
	kq.left -= got
	if kq.left <= kq.size/2 && !kq.fetching && q.startFetch() {
		kq.fetching = true
		go q.prefetch(context.WithoutCancel(ctx), kq, kq.w, q.limits(tier), q.nextLease(kq, now))
	}
	q.returnLeftIfClosed(ctx, kq)
	return got, kq.w.Hour, "", time.Time{}, nil
}

// giveBack returns n credits take granted in hour and a batch did not use; when the hour
// has turned meanwhile they go back to Redis, as fill gives back a lease of the last hour.
func (q *quotas) giveBack(ctx context.Context, kq *keyQuota, hour time.Time, n int64) {
	if n <= 0 {
		return
	}
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.w.Hour.Equal(hour) {
		kq.left += n
		q.returnLeftIfClosed(ctx, kq)
		return
	}
	_ = q.st.Return(ctx, q.st.WindowAt(kq.keyID, hour), n)
}

// returnLeftIfClosed gives kq's unused credits straight back to Redis once returnAll has
// begun: a writer still running after it (the shutdown's wait ended first) must not leave
// credits on a replica that is going away, counted as used until the hour ends (kq.mu held).
func (q *quotas) returnLeftIfClosed(ctx context.Context, kq *keyQuota) {
	if kq.left <= 0 {
		return
	}
	if q.closed.Load() {
		_ = q.st.Return(ctx, kq.w, kq.left)
		kq.left = 0
	}
}

// prime makes sure the key holds a credit on this replica (or is known to be refused), leasing
// one from Redis when it holds none, without using it: a writer primes before it starts a
// batch, so it does not wait on Redis with a batch (and a ping) held back.
func (q *quotas) prime(ctx context.Context, kq *keyQuota, keyID, tier string) error {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	_, _, err := q.fill(ctx, kq, keyID, tier, q.now())
	q.returnLeftIfClosed(ctx, kq)
	return err
}

// spent reports, without taking a credit, whether keyID's quota (kq, its entry) is spent: from
// what this replica knows (a refusal still in force, or a credit held) or else one read of the
// counts in Redis, whose refusal is then kept as fill keeps one. A connection checks it as it
// subscribes (see conn.checkQuota). The read is made without kq.mu, so the key's writers do
// not wait on it for their credits; what changed meanwhile is looked at again once the lock
// is taken back (a credit leased by a writer says the read is stale: its lease was granted
// after it, within the limits).
func (q *quotas) spent(ctx context.Context, kq *keyQuota, keyID, tier string) (limitType string, reset time.Time, err error) {
	now := q.now()
	if lt, reset, known := q.known(kq, now); known {
		return lt, reset, nil
	}
	w := q.st.WindowAt(keyID, now)
	lt, err := q.st.Spent(ctx, w, q.limits(tier))
	if err != nil || lt == "" {
		return "", time.Time{}, err
	}
	reset = w.HourEnd
	if lt == store.LimitMonthly {
		reset = w.MonthEnd
	}
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.denied != "" && now.Before(kq.until) {
		return kq.denied, kq.until, nil
	}
	if within(kq.w, now) && kq.left > 0 {
		return "", time.Time{}, nil
	}
	kq.denied, kq.until = lt, reset
	return lt, reset, nil
}

// known answers spent from what the replica knows of the key (kq) at now: a refusal still in
// force, or a credit held; known false when Redis must be read.
func (q *quotas) known(kq *keyQuota, now time.Time) (limitType string, reset time.Time, known bool) {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.denied != "" && now.Before(kq.until) {
		return kq.denied, kq.until, true
	}
	if within(kq.w, now) && kq.left > 0 {
		return "", time.Time{}, true
	}
	return "", time.Time{}, false
}

func (q *quotas) key(keyID string) *keyQuota {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.keys[keyID]
	if kq == nil {
		kq = &keyQuota{keyID: keyID}
		q.keys[keyID] = kq
	}
	return kq
}

// fill moves kq to now's window and leases credits when it holds none; limitType names the
// window found exhausted (kq.mu held).
func (q *quotas) fill(ctx context.Context, kq *keyQuota, keyID, tier string, now time.Time) (limitType string, reset time.Time, err error) {
	w := kq.w
	if !within(w, now) {
		w = q.st.WindowAt(keyID, now)
	}
	if !w.Hour.Equal(kq.w.Hour) {
		// A lease belongs to its hour; what is left of the last one is given back to it.
		if kq.left > 0 {
			_ = q.st.Return(ctx, kq.w, kq.left)
		}
		kq.w, kq.left = w, 0
	}
	if kq.denied != "" && now.Before(kq.until) {
		return kq.denied, kq.until, nil
	}
	kq.denied = ""
	if kq.left > 0 {
		return "", time.Time{}, nil
	}
	n, lt, err := q.st.Lease(ctx, w, q.limits(tier), q.nextLease(kq, now))
	if err != nil {
		return "", time.Time{}, err
	}
	if n == 0 {
		kq.denied, kq.until = lt, w.HourEnd
		if lt == store.LimitMonthly {
			kq.until = w.MonthEnd
		}
		return kq.denied, kq.until, nil
	}
	kq.left = n
	return "", time.Time{}, nil
}

// startFetch registers a background lease; false once returnAll has begun.
func (q *quotas) startFetch() bool {
	q.fetchMu.Lock()
	defer q.fetchMu.Unlock()
	if q.closed.Load() {
		return false
	}
	q.fetches.Add(1)
	return true
}

// prefetch takes the key's next lease before the current one is spent. The script never
// grants past either limit, so credits leased ahead are still within the quota; when the
// limit is reached it grants nothing and the key is refused once what it holds is spent.
func (q *quotas) prefetch(ctx context.Context, kq *keyQuota, w store.Window, l store.Limits, want int64) {
	defer q.fetches.Done()
	n, _, err := q.st.Lease(ctx, w, l, want)
	kq.mu.Lock()
	defer kq.mu.Unlock()
	kq.fetching = false
	if err != nil || n == 0 {
		return
	}
	if !kq.w.Hour.Equal(w.Hour) {
		// The hour turned meanwhile: the lease belongs to the hour it was taken in.
		_ = q.st.Return(ctx, w, n)
		return
	}
	kq.left += n
}

// ready reports whether take would answer for the key (kq) without waiting on Redis: it holds
// a credit on this replica, or is known to be refused until its window ends.
func (q *quotas) ready(kq *keyQuota) bool {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	now := q.now()
	if !within(kq.w, now) {
		return false
	}
	return kq.left > 0 && kq.denied == "" || kq.denied != "" && now.Before(kq.until)
}

// within reports whether t is in w's hour (a zero window holds nothing).
func within(w store.Window, t time.Time) bool {
	return !t.Before(w.Hour) && t.Before(w.HourEnd)
}

// returnAll gives back every lease not used (on shutdown), after the leases being taken in
// the background have arrived: one landing later would stay counted in Redis, unused.
func (q *quotas) returnAll(ctx context.Context) {
	q.fetchMu.Lock()
	q.closed.Store(true)
	q.fetchMu.Unlock()
	q.fetches.Wait()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, kq := range q.keys {
		kq.mu.Lock()
		if kq.left > 0 {
			_ = q.st.Return(ctx, kq.w, kq.left)
			kq.left = 0
		}
		kq.mu.Unlock()
	}
}
