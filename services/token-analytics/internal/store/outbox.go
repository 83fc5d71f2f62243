package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// OutboxEvent is an outbox row not yet marked sent.
type OutboxEvent struct {
	ID      int64
	EventID string
	Topic   string
	Key     string
	Payload []byte
}

// ClaimOutbox locks up to limit unsent rows (oldest first, skipping rows another relay holds),
// hands them to publish and marks them sent when it returns nil. It returns how many were sent.
func (s *Store) ClaimOutbox(ctx context.Context, limit int, publish func(context.Context, []OutboxEvent) error) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sqlOutboxClaim, limit)
		if err != nil {
			return err
		}
		evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[OutboxEvent])
		if err != nil || len(evs) == 0 {
			return err
		}
		if err := publish(ctx, evs); err != nil {
			return err
		}
		ids := make([]int64, len(evs))
		for i, e := range evs {
			ids[i] = e.ID
		}
		if _, err := tx.Exec(ctx, sqlOutboxMark, ids); err != nil {
			return err
		}
		n = len(evs)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("relay outbox: %w", err)
	}
	return n, nil
}

// PruneOutbox deletes rows sent before cutoff.
func (s *Store) PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, sqlOutboxPrune, cutoff)
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", err)
	}
	return tag.RowsAffected(), nil
}
