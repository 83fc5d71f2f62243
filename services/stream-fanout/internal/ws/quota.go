package ws

import (
	"context"
	"sync"
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
}

type keyQuota struct {
	mu   sync.Mutex
	w    store.Window
	left int64
	// size is the next lease: it doubles (up to maxLeaseFactor times the base) while each
	// lease is spent within leaseTurn, so a key receiving thousands of transfers a second
	// costs a few Redis calls a second rather than one per base lease, and falls back to the
	// base when the key slows down, so little sits leased on one replica.
	size   int64
	leased time.Time
	denied string    // the window type found exhausted
	until  time.Time // denied holds until then
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

// take uses one credit of keyID's quota. When a limit is reached it returns the window type
// and when it resets.
func (q *quotas) take(ctx context.Context, keyID, tier string) (limitType string, reset time.Time, err error) {
	q.mu.Lock()
	kq := q.keys[keyID]
	if kq == nil {
		kq = &keyQuota{}
		q.keys[keyID] = kq
	}
	q.mu.Unlock()
	now := q.now()
	kq.mu.Lock()
	defer kq.mu.Unlock()
	w := q.st.WindowAt(keyID, now)
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
	if kq.left == 0 {
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
	}
	kq.left--
	return "", time.Time{}, nil
}

// returnAll gives back every lease not used (on shutdown).
func (q *quotas) returnAll(ctx context.Context) {
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
