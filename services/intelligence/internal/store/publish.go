package store

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/chainintel/chainintel/libs/outbox"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
)

// AttributionRow is one address's attribution as it is published.
type AttributionRow struct {
	attribution.Address
	Entity      *attribution.Entity
	Predicted   *attribution.Entity
	UpdatedAtMs int64
}

//go:embed sql/attribution_select.sql
var attributionSelect string

// entityCells are the scan targets of one entity's columns of attributionSelect (all NULL when
// the address has no such entity).
type entityCells struct {
	id, name, typ, note, service, website, twitter, linkedin, description *string
	tags                                                                  []byte
	version                                                               *int64
}

func (c *entityCells) targets() []any {
	return []any{&c.id, &c.name, &c.typ, &c.note, &c.service, &c.website, &c.twitter, &c.linkedin, &c.description, &c.tags, &c.version}
}

func (c *entityCells) entity() (*attribution.Entity, error) {
	if c.id == nil {
		return nil, nil
	}
	e := &attribution.Entity{ID: *c.id, Name: *c.name, Type: *c.typ, Note: *c.note, Service: *c.service, Website: *c.website,
		Twitter: *c.twitter, LinkedIn: *c.linkedin, Description: *c.description, Version: *c.version}
	tags, err := decodeTags(c.tags)
	if err != nil {
		return nil, fmt.Errorf("entity %s: %w", e.ID, err)
	}
	e.Tags = tags
	return e, nil
}

func scanAttributionRows(rows pgx.Rows) ([]AttributionRow, error) {
	defer rows.Close()
	var out []AttributionRow
	for rows.Next() {
		var r AttributionRow
		var ec, pc entityCells
		dest := []any{&r.ChainType, &r.Address.Address, &r.EntityID, &r.Label, &r.Confidence, &r.Source,
			&r.PredictedEntity, &r.DepositServiceID, &r.IsContract, &r.ClusterIDs, &r.Version, &r.UpdatedAtMs}
		dest = append(append(dest, ec.targets()...), pc.targets()...)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		var err error
		if r.Entity, err = ec.entity(); err != nil {
			return nil, err
		}
		if r.Predicted, err = pc.entity(); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// PublishPending hands the attributions changed since the publish cursor, in version order and
// at most limit, to publish, and advances the cursor when publish returns nil. The cursor row is
// locked meanwhile, so concurrent publishers (several replicas, an import command) take turns
// and a change is published at least once. It returns how many rows it handed over.
func (s *Store) PublishPending(ctx context.Context, limit int, publish func(context.Context, []AttributionRow) error) (int, error) {
	n := 0
	err := s.inTx(ctx, false, func(tx pgx.Tx) error {
		cursor, err := lockCursor(ctx, tx)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, attributionSelect+"WHERE a.version > $1 ORDER BY a.version LIMIT $2", cursor, limit)
		if err != nil {
			return fmt.Errorf("pending attributions: %w", err)
		}
		rs, err := scanAttributionRows(rows)
		if err != nil {
			return fmt.Errorf("pending attributions: %w", err)
		}
		if len(rs) == 0 {
			return nil
		}
		if err := publish(ctx, rs); err != nil {
			return err
		}
		n = len(rs)
		_, err = tx.Exec(ctx, "UPDATE intel.publish_cursor SET version = $1 WHERE name = 'attributions'", rs[len(rs)-1].Version)
		return err
	})
	return n, err
}

// lockCursor locks the publish cursor in tx, the turn of whoever publishes attributions, and
// returns the highest published version.
func lockCursor(ctx context.Context, tx pgx.Tx) (int64, error) {
	var cursor int64
	if err := tx.QueryRow(ctx, "SELECT version FROM intel.publish_cursor WHERE name = 'attributions' FOR UPDATE").Scan(&cursor); err != nil {
		return 0, fmt.Errorf("lock publish cursor: %w", err)
	}
	return cursor, nil
}

// RepublishPage hands the attributions after the key (chainType, address), in key order and at
// most limit, to publish, for a full re-publication, and returns them. It holds the publish
// cursor's lock, as PublishPending does, from before it reads the page until publish returned,
// so it and the live relay take turns: a change committed before the read is in the page at its
// newest version (the relay publishes that same version, before or after), and a change
// committed after the read is relayed after the page was published. Either way a key's newest
// version is the last on the compacted topic, a tombstone included.
func (s *Store) RepublishPage(ctx context.Context, afterType, afterAddr string, limit int, publish func(context.Context, []AttributionRow) error) ([]AttributionRow, error) {
	var rs []AttributionRow
	err := s.inTx(ctx, false, func(tx pgx.Tx) error {
		if _, err := lockCursor(ctx, tx); err != nil {
			return err
		}
		// A statement after the lock: its snapshot holds every change the relay published.
		rows, err := tx.Query(ctx, attributionSelect+"WHERE (a.chain_type, a.address) > ($1, $2) ORDER BY a.chain_type, a.address LIMIT $3", afterType, afterAddr, limit)
		if err != nil {
			return fmt.Errorf("attribution page: %w", err)
		}
		if rs, err = scanAttributionRows(rows); err != nil {
			return fmt.Errorf("attribution page: %w", err)
		}
		if len(rs) == 0 {
			return nil
		}
		return publish(ctx, rs)
	})
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// Attribution returns one address's attribution as published.
func (s *Store) Attribution(ctx context.Context, chainType, addr string) (AttributionRow, error) {
	rows, err := s.pool.Query(ctx, attributionSelect+"WHERE a.chain_type = $1 AND a.address = $2", chainType, addr)
	if err != nil {
		return AttributionRow{}, err
	}
	rs, err := scanAttributionRows(rows)
	if err != nil {
		return AttributionRow{}, err
	}
	if len(rs) == 0 {
		return AttributionRow{}, ErrNotFound
	}
	return rs[0], nil
}

// PublishCursor returns the highest published version.
func (s *Store) PublishCursor(ctx context.Context) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, "SELECT version FROM intel.publish_cursor WHERE name = 'attributions'").Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// PublishBacklog counts the attribution versions above the publish cursor (changes not yet on
// intel.attributions.v1) and reads how long ago the oldest of them was written, on the
// database's clock (0 when none waits). Both walk the addresses_version index from the cursor,
// so they read only unpublished rows.
func (s *Store) PublishBacklog(ctx context.Context) (outbox.Backlog, error) {
	var b outbox.Backlog
	var age float64
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM intel.addresses WHERE version > c.version),
		coalesce((SELECT extract(epoch FROM now() - updated_at)::float8 FROM intel.addresses
			WHERE version > c.version ORDER BY version LIMIT 1), 0)
		FROM intel.publish_cursor c WHERE c.name = 'attributions'`).Scan(&b.Pending, &age)
	if err != nil {
		return outbox.Backlog{}, fmt.Errorf("publish backlog: %w", err)
	}
	b.OldestAge = time.Duration(age * float64(time.Second))
	return b, nil
}
