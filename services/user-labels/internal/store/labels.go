package store

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
)

// EachLabel calls fn with every label of user as it is read, ordered by chain type and address,
// and returns the version of the label set they are (read in one snapshot; 0 when the user has
// no labels). No list of the labels is built: the caller encodes each as it comes.
func (s *Store) EachLabel(ctx context.Context, user string, fn func(app.Label) error) (int64, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT (SELECT labels FROM userdata.user_versions WHERE user_id = $1), name, note, address, chain_type
		FROM userdata.labels WHERE user_id = $1 ORDER BY chain_type, address`, user)
	if err != nil {
		return 0, fmt.Errorf("list labels: %w", err)
	}
	var l app.Label
	var version int64
	_, err = pgx.ForEachRow(rows, []any{&version, &l.Name, &l.Note, &l.Address, &l.ChainType}, func() error {
		return fn(l)
	})
	if err != nil {
		return 0, fmt.Errorf("list labels: %w", err)
	}
	return version, nil
}

var (
	//go:embed sql/label_room.sql
	labelRoomSQL string
	//go:embed sql/entity_count.sql
	entityCountSQL string
)

// UpsertLabels creates or replaces labels, whose refs must be distinct, unless the user would
// then store more than max labels (an *app.OwnerLimitError; nothing is written). The count is
// taken with the user's version row locked, which every label write locks first, so concurrent
// writes cannot pass the cap together.
func (s *Store) UpsertLabels(ctx context.Context, user string, labels []app.Label, max int) error {
	names := make([]string, len(labels))
	notes := make([]string, len(labels))
	refs := make([]app.AddressRef, len(labels))
	for i, l := range labels {
		names[i], notes[i], refs[i] = l.Name, l.Note, l.Ref()
	}
	types, addrs := refArrays(refs)
	return s.write(ctx, "upsert labels", func(tx pgx.Tx) (bool, error) {
		if err := bumpLabels(ctx, tx, user); err != nil {
			return false, err
		}
		var have, existing int
		if err := tx.QueryRow(ctx, labelRoomSQL, user, types, addrs).Scan(&have, &existing); err != nil {
			return false, err
		}
		if adding := len(labels) - existing; have+adding > max {
			return false, &app.OwnerLimitError{What: "labels", Have: have, Adding: adding, Max: max}
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO userdata.labels AS l (user_id, chain_type, address, name, note)
			SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[])
			ON CONFLICT (user_id, chain_type, address)
			DO UPDATE SET name = excluded.name, note = excluded.note, updated_at = now()`,
			user, types, addrs, names, notes)
		if err != nil {
			return false, err
		}
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_LABEL, eventsv1.UserChange_OP_UPSERT, "", refs)...)
	})
}

// UpdateLabel replaces the name and note of an existing label.
func (s *Store) UpdateLabel(ctx context.Context, user string, l app.Label) error {
	return s.write(ctx, "update label", func(tx pgx.Tx) (bool, error) {
		if err := bumpLabels(ctx, tx, user); err != nil {
			return false, err
		}
		tag, err := tx.Exec(ctx, `
			UPDATE userdata.labels SET name = $4, note = $5, updated_at = now()
			WHERE user_id = $1 AND chain_type = $2 AND address = $3`,
			user, l.ChainType, l.Address, l.Name, l.Note)
		if err != nil {
			return false, err
		}
		if tag.RowsAffected() == 0 {
			return false, app.ErrNotFound
		}
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_LABEL, eventsv1.UserChange_OP_UPSERT, "", []app.AddressRef{l.Ref()})...)
	})
}

// DeleteLabels deletes the user's labels of refs and returns how many there were.
func (s *Store) DeleteLabels(ctx context.Context, user string, refs []app.AddressRef) (int, error) {
	types, addrs := refArrays(refs)
	var n int
	err := s.write(ctx, "delete labels", func(tx pgx.Tx) (bool, error) {
		// The version row is locked before any label row, as in every label write, so
		// concurrent writes of one user cannot deadlock.
		if err := bumpLabels(ctx, tx, user); err != nil {
			return false, err
		}
		rows, err := tx.Query(ctx, `
			DELETE FROM userdata.labels l
			USING unnest($2::text[], $3::text[]) AS q(chain_type, address)
			WHERE l.user_id = $1 AND l.chain_type = q.chain_type AND l.address = q.address
			RETURNING l.chain_type, l.address`, user, types, addrs)
		if err != nil {
			return false, err
		}
		deleted, err := pgx.CollectRows(rows, pgx.RowToStructByPos[app.AddressRef])
		if err != nil {
			return false, err
		}
		n = len(deleted)
		if n == 0 {
			return false, nil
		}
		app.SortRefs(deleted)
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_LABEL, eventsv1.UserChange_OP_DELETE, "", deleted)...)
	})
	return n, err
}

// Lookup returns the user's labels of refs and the user's entities holding them. The two
// queries run at once on two connections.
func (s *Store) Lookup(ctx context.Context, user string, refs []app.AddressRef) (map[app.AddressRef]app.LabelText, map[app.AddressRef][]app.EntityRef, error) {
	types, addrs := refArrays(refs)
	labels := map[app.AddressRef]app.LabelText{}
	entities := map[app.AddressRef][]app.EntityRef{}
	var labelErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		rows, err := s.pool.Query(ctx, `
			SELECT l.chain_type, l.address, l.name, l.note
			FROM unnest($2::text[], $3::text[]) AS q(chain_type, address)
			JOIN userdata.labels l ON l.user_id = $1 AND l.chain_type = q.chain_type AND l.address = q.address`,
			user, types, addrs)
		if err != nil {
			labelErr = err
			return
		}
		var r app.AddressRef
		var t app.LabelText
		_, labelErr = pgx.ForEachRow(rows, []any{&r.ChainType, &r.Address, &t.Name, &t.Note}, func() error {
			labels[r] = t
			return nil
		})
	})
	rows, err := s.pool.Query(ctx, `
		SELECT a.chain_type, a.address, e.id::text, e.name, e.note
		FROM unnest($2::text[], $3::text[]) AS q(chain_type, address)
		JOIN userdata.entity_addresses a ON a.user_id = $1 AND a.chain_type = q.chain_type AND a.address = q.address
		JOIN userdata.entities e ON e.id = a.entity_id
		ORDER BY e.seq`,
		user, types, addrs)
	if err == nil {
		var r app.AddressRef
		var e app.EntityRef
		_, err = pgx.ForEachRow(rows, []any{&r.ChainType, &r.Address, &e.ID, &e.Name, &e.Note}, func() error {
			entities[r] = append(entities[r], e)
			return nil
		})
	}
	wg.Wait()
	if err = errors.Join(labelErr, err); err != nil {
		return nil, nil, fmt.Errorf("lookup: %w", err)
	}
	return labels, entities, nil
}
