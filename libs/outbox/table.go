package outbox

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Write runs fn in a transaction of db and, when fn wrote outbox rows (returned true) and the
// transaction committed, calls committed: a store's kick of its relay, so the rows are published
// at once rather than at the next poll. what names the write in the error.
func Write(ctx context.Context, db DB, what string, fn func(tx pgx.Tx) (events bool, err error), committed func()) error {
	var events bool
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		var err error
		events, err = fn(tx)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if events {
		committed()
	}
	return nil
}

// DB is what Table needs of a pool.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Table is a service's outbox table in PostgreSQL (each service keeps its outbox in its own
// schema, with the columns id bigserial, event_id uuid, topic, key, payload, created_at
// timestamptz default now(), sent_at and failed text, and a partial index on id WHERE sent_at IS
// NULL). It is a Store and a Backlogger. Make it with NewTable.
//
// A row the brokers refuse for good is parked: sent_at is set, so it leaves the queue and the
// rows after it flow, and failed holds the brokers' answer. Pruning keeps parked rows, for an
// operator to read and delete, or to re-queue (sent_at and failed set to NULL) once the cause
// is fixed (the topic's max.message.bytes raised): it is then published after the newer rows of
// its key that went out meanwhile.
type Table struct {
	db DB
	// name is the table's quoted name, which keys its relay lock (sql/lock.sql).
	name string
	// label is the unquoted schema.table, the outbox label of the relay's metrics.
	label string
	// claim takes the limit ($1) and returns id, event_id::text, topic, key, payload of unsent
	// rows, oldest first, FOR UPDATE.
	claim string
	// mark sets sent_at of the rows whose ids are $1 (bigint[]).
	mark string
	// park sets sent_at and failed of the rows whose ids are $1 (bigint[]) to the reasons $2
	// (text[]).
	park string
	// prune deletes the rows sent before $1.
	prune string
	// backlog counts the unsent rows and reads the oldest one's age.
	backlog string
}

// The statements of every outbox table, with the table's quoted name for %[1]s.
var (
	//go:embed sql/lock.sql
	lockSQL string
	//go:embed sql/claim.sql
	claimSQL string
	//go:embed sql/mark.sql
	markSQL string
	//go:embed sql/park.sql
	parkSQL string
	//go:embed sql/prune.sql
	pruneSQL string
)

// NewTable returns the outbox table name (schema and table, as pgx.Identifier{"market",
// "outbox"}) over db. The name is quoted (pgx.Identifier.Sanitize), so any name is read as a
// name and never as SQL.
func NewTable(db DB, name pgx.Identifier) Table {
	q := name.Sanitize()
	return Table{db: db, name: q, label: strings.Join(name, "."), claim: fmt.Sprintf(claimSQL, q), mark: fmt.Sprintf(markSQL, q), park: fmt.Sprintf(parkSQL, q),
		prune: fmt.Sprintf(pruneSQL, q), backlog: fmt.Sprintf(backlogSQL, q)}
}

// ClaimOutbox takes the table's relay lock, waiting while another relay holds it, then claims up
// to limit unsent rows (oldest first), hands them to publish, and marks them sent when publish
// returns nil, parking those it refused; when it fails they stay unsent for the next attempt.
// It returns how many were sent (not parked). The lock is held until the rows are marked (the transaction ends), so relays take turns
// chunk by chunk: with several relays each chunk still goes out whole, and no chunk is published
// while an older one is, so the events of a key reach the topic in outbox order (consumers of
// compacted topics keep the last one). Rows are claimed in a statement after the lock is
// granted, so they are read after the previous holder's marks committed.
func (t Table) ClaimOutbox(ctx context.Context, limit int, publish PublishFunc) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, t.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockSQL, t.name); err != nil {
			return fmt.Errorf("relay lock: %w", err)
		}
		rows, err := tx.Query(ctx, t.claim, limit)
		if err != nil {
			return err
		}
		evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Event])
		if err != nil || len(evs) == 0 {
			return err
		}
		refused, err := publish(ctx, evs)
		if err != nil {
			return err
		}
		parked := make(map[int64]bool, len(refused))
		parkIDs, reasons := make([]int64, len(refused)), make([]string, len(refused))
		for i, r := range refused {
			parked[r.ID] = true
			parkIDs[i], reasons[i] = r.ID, r.Reason
		}
		ids := make([]int64, 0, len(evs))
		for _, e := range evs {
			if !parked[e.ID] {
				ids = append(ids, e.ID)
			}
		}
		if _, err := tx.Exec(ctx, t.mark, ids); err != nil {
			return err
		}
		if len(refused) > 0 {
			if _, err := tx.Exec(ctx, t.park, parkIDs, reasons); err != nil {
				return fmt.Errorf("park refused rows: %w", err)
			}
		}
		n = len(ids)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("relay outbox: %w", err)
	}
	return n, nil
}

// PruneOutbox deletes rows sent before cutoff and returns how many.
func (t Table) PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error) {
	tag, err := t.db.Exec(ctx, t.prune, cutoff)
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", err)
	}
	return tag.RowsAffected(), nil
}
