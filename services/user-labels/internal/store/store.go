// Package store is the user-labels service's PostgreSQL storage (schema userdata): labels,
// entities and their addresses, additions to operator entities, and the outbox of change events
// written in the same transaction as each change.
//
// Every query of a user's data filters on the user id, so one user can never read or change
// another's rows; an id of someone else's entity is app.ErrNotFound, exactly like an unknown one.
package store

import (
	"context"
	"time"

	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store implements app.Store over a pgx pool. It is safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	changed func()           // called after a transaction that wrote outbox events commits
	now     func() time.Time // event times
}

var _ app.Store = (*Store)(nil)

// Option tunes a Store.
type Option func(*Store)

// OnOutbox sets a function called (without blocking on it) after every committed transaction
// that wrote outbox events, so the relay can publish them at once instead of at its next poll.
func OnOutbox(f func()) Option { return func(s *Store) { s.changed = f } }

// New returns a store over pool.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{pool: pool, changed: func() {}, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// write runs fn in a transaction and, when it committed events (fn returns true), signals the
// relay.
func (s *Store) write(ctx context.Context, what string, fn func(tx pgx.Tx) (events bool, err error)) error {
	return outbox.Write(ctx, s.pool, what, fn, s.changed)
}

// refArrays splits refs into parallel arrays for unnest.
func refArrays(refs []app.AddressRef) (types, addrs []string) {
	types = make([]string, len(refs))
	addrs = make([]string, len(refs))
	for i, r := range refs {
		types[i], addrs[i] = r.ChainType, r.Address
	}
	return types, addrs
}

// Pool is the store's pool (for tests and benchmarks that seed or inspect the database).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }
