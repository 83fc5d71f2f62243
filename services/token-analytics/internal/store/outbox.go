package store

import (
	"context"
	"time"

	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/jackc/pgx/v5"
)

func (s *Store) outbox() outbox.Table {
	return outbox.NewTable(s.pool, pgx.Identifier{"market", "outbox"})
}

// ClaimOutbox locks up to limit unsent rows (oldest first, one relay at a time: libs/outbox),
// hands them to publish, and marks them sent when publish returns nil, parking the rows it says
// the brokers refuse for good; when it fails they stay unsent for the next attempt. It returns
// how many were sent.
func (s *Store) ClaimOutbox(ctx context.Context, limit int, publish outbox.PublishFunc) (int, error) {
	return s.outbox().ClaimOutbox(ctx, limit, publish)
}

// PruneOutbox deletes rows sent before cutoff.
func (s *Store) PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.outbox().PruneOutbox(ctx, cutoff)
}

// Backlog counts the unsent rows and reads the oldest one's age, for the relay's gauges.
func (s *Store) Backlog(ctx context.Context) (outbox.Backlog, error) {
	return s.outbox().Backlog(ctx)
}

// Name is the outbox's name as the relay's metrics label it.
func (s *Store) Name() string { return s.outbox().Name() }
