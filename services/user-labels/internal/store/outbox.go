package store

import (
	"context"
	"fmt"
	"time"

	"github.com/chainintel/chainintel/libs/outbox"
	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
)

// MaxEventAddresses is the most addresses one UserChange carries; a bigger change (a batch of
// labels) becomes several events, so no record nears the broker's message size limit.
const MaxEventAddresses = 1000

// change builds the events describing one change of user's data: a single event, or several
// when it touches more than MaxEventAddresses addresses. An entity deleted or created without
// addresses still yields one event.
func (s *Store) change(user string, kind eventsv1.UserChange_Kind, op eventsv1.UserChange_Op, entityID string, refs []app.AddressRef) []*eventsv1.UserChange {
	now := s.now().UnixMilli()
	var out []*eventsv1.UserChange
	for start := 0; start == 0 || start < len(refs); start += MaxEventAddresses {
		end := min(start+MaxEventAddresses, len(refs))
		c := &eventsv1.UserChange{UserId: user, Kind: kind, Op: op, EntityId: entityID, TimeMs: now}
		for _, r := range refs[start:end] {
			c.Addresses = append(c.Addresses, &eventsv1.AddressRef{ChainType: r.ChainType, Address: r.Address})
		}
		out = append(out, c)
	}
	return out
}

// enqueue writes changes to the outbox in tx.
func (s *Store) enqueue(ctx context.Context, tx pgx.Tx, changes ...*eventsv1.UserChange) error {
	if len(changes) == 0 {
		return nil
	}
	keys := make([]string, len(changes))
	payloads := make([][]byte, len(changes))
	for i, c := range changes {
		b, err := proto.Marshal(c)
		if err != nil {
			return fmt.Errorf("encode user change: %w", err)
		}
		keys[i], payloads[i] = c.UserId, b
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO userdata.outbox (topic, key, payload)
		SELECT $1, * FROM unnest($2::text[], $3::bytea[])`, eventsv1.TopicUserChanges, keys, payloads)
	if err != nil {
		return fmt.Errorf("write outbox: %w", err)
	}
	return nil
}

func (s *Store) outbox() outbox.Table {
	return outbox.NewTable(s.pool, pgx.Identifier{"userdata", "outbox"})
}

// ClaimOutbox locks up to limit unsent rows (oldest first, one relay at a time: libs/outbox),
// hands them to publish, and marks them sent when publish returns nil, parking the rows it says
// the brokers refuse for good; when it fails they stay unsent for the next attempt. It returns
// how many were sent.
func (s *Store) ClaimOutbox(ctx context.Context, limit int, publish outbox.PublishFunc) (int, error) {
	return s.outbox().ClaimOutbox(ctx, limit, publish)
}

// PruneOutbox deletes events sent before cutoff and returns how many.
func (s *Store) PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.outbox().PruneOutbox(ctx, cutoff)
}

// PendingOutbox counts events not yet sent.
func (s *Store) PendingOutbox(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM userdata.outbox WHERE sent_at IS NULL`).Scan(&n)
	return n, err
}

// Backlog counts the unsent rows and reads the oldest one's age, for the relay's gauges.
func (s *Store) Backlog(ctx context.Context) (outbox.Backlog, error) {
	return s.outbox().Backlog(ctx)
}

// Name is the outbox's name as the relay's metrics label it.
func (s *Store) Name() string { return s.outbox().Name() }
