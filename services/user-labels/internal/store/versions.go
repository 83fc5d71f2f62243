package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
)

// Versions returns the versions of user's label set and entity set (zero for a user who never
// had any). Every write of either moves its version in the same transaction.
func (s *Store) Versions(ctx context.Context, user string) (app.Versions, error) {
	var v app.Versions
	err := s.pool.QueryRow(ctx, `SELECT labels, entities FROM userdata.user_versions WHERE user_id = $1`, user).Scan(&v.Labels, &v.Entities)
	if errors.Is(err, pgx.ErrNoRows) {
		return app.Versions{}, nil
	}
	if err != nil {
		return v, fmt.Errorf("versions of %s: %w", user, err)
	}
	return v, nil
}

// bumpLabels moves user's label set to its next version, in the transaction that changes it. It
// also serialises a user's label writes, so versions and contents change in the same order.
func bumpLabels(ctx context.Context, tx pgx.Tx, user string) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO userdata.user_versions AS v (user_id, labels) VALUES ($1, 1)
		ON CONFLICT (user_id) DO UPDATE SET labels = v.labels + 1`, user)
	return err
}

// bumpEntities moves user's entity set (names, notes, addresses) to its next version.
func bumpEntities(ctx context.Context, tx pgx.Tx, user string) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO userdata.user_versions AS v (user_id, entities) VALUES ($1, 1)
		ON CONFLICT (user_id) DO UPDATE SET entities = v.entities + 1`, user)
	return err
}

// LookupIndex reads, in one snapshot, user's versions, labels and entity memberships, for an
// in-memory lookup index. When the user has more than maxLabels labels it reads no more and
// returns the versions alone (nil maps), since such an index would be too big to keep.
func (s *Store) LookupIndex(ctx context.Context, user string, maxLabels int) (app.LookupIndex, error) {
	var idx app.LookupIndex
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		idx = app.LookupIndex{Labels: map[app.AddressRef]app.LabelText{}, Entities: map[app.AddressRef][]app.EntityRef{}}
		err := tx.QueryRow(ctx, `SELECT labels, entities FROM userdata.user_versions WHERE user_id = $1`, user).Scan(&idx.Versions.Labels, &idx.Versions.Entities)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT chain_type, address, name, note FROM userdata.labels WHERE user_id = $1 LIMIT $2`, user, maxLabels+1)
		if err != nil {
			return err
		}
		var r app.AddressRef
		var t app.LabelText
		if _, err := pgx.ForEachRow(rows, []any{&r.ChainType, &r.Address, &t.Name, &t.Note}, func() error {
			idx.Labels[r] = t
			return nil
		}); err != nil {
			return err
		}
		if len(idx.Labels) > maxLabels {
			idx.Labels, idx.Entities = nil, nil
			return nil
		}
		rows, err = tx.Query(ctx, `
			SELECT a.chain_type, a.address, e.id::text, e.name, e.note
			FROM userdata.entity_addresses a JOIN userdata.entities e ON e.id = a.entity_id
			WHERE a.user_id = $1 ORDER BY e.seq`, user)
		if err != nil {
			return err
		}
		var e app.EntityRef
		if _, err := pgx.ForEachRow(rows, []any{&r.ChainType, &r.Address, &e.ID, &e.Name, &e.Note}, func() error {
			idx.Entities[r] = append(idx.Entities[r], e)
			return nil
		}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return app.LookupIndex{}, fmt.Errorf("lookup index of %s: %w", user, err)
	}
	return idx, nil
}
