package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lease is a named lease in market.leases that one holder at a time holds until it expires: a
// holder that stops renewing it (a replica that died) is replaced once its ttl has passed.
type Lease struct {
	st     *Store
	name   string
	holder string
	ttl    time.Duration
	now    func() time.Time
}

// Lease returns lease name as holder (an id unique to the process) holds it: each Take holds
// it for ttl more. now, if set, is the clock the expiry is read against (tests); nil is the
// database's clock, which every replica shares.
func (s *Store) Lease(name, holder string, ttl time.Duration, now func() time.Time) *Lease {
	return &Lease{st: s, name: name, holder: holder, ttl: ttl, now: now}
}

// Holder is the id this Lease takes the lease as.
func (l *Lease) Holder() string { return l.holder }

// Take takes the lease, or renews it when this holder has it, for ttl from now; false: another
// holder has it and it has not expired.
func (l *Lease) Take(ctx context.Context) (bool, error) {
	var now *time.Time
	if l.now != nil {
		t := l.now()
		now = &t
	}
	var until time.Time
	err := l.st.pool.QueryRow(ctx, sqlLeaseTake, l.name, l.holder, now, l.ttl.Microseconds()).Scan(&until)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	}
	return true, nil
}

// Release ends the lease if this holder has it, so another holder need not wait for its
// expiry.
func (l *Lease) Release(ctx context.Context) error {
	if _, err := l.st.pool.Exec(ctx, sqlLeaseRelease, l.name, l.holder); err != nil {
		return fmt.Errorf("lease %s: %w", l.name, err)
	}
	return nil
}
