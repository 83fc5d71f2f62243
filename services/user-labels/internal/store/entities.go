package store

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	eventsv1 "github.com/chainintel/chainintel/proto/events/v1"
	"github.com/chainintel/chainintel/services/user-labels/internal/app"
	"github.com/jackc/pgx/v5"
)

const entityCols = `id::text, name, note, shareable, created_at, updated_at`

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func scanEntity(row pgx.Row) (app.Entity, error) {
	e := app.Entity{Type: app.EntityTypeUser}
	err := row.Scan(&e.ID, &e.Name, &e.Note, &e.Shareable, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, app.ErrNotFound
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	e.LinkShareable = e.Shareable
	return e, err
}

// addressesOf returns an entity's addresses sorted by chain type and address.
func addressesOf(ctx context.Context, q querier, id string) ([]app.AddressRef, error) {
	rows, err := q.Query(ctx, `
		SELECT chain_type, address FROM userdata.entity_addresses
		WHERE entity_id = $1 ORDER BY chain_type, address`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[app.AddressRef])
}

func insertAddresses(ctx context.Context, tx pgx.Tx, user, id string, refs []app.AddressRef) error {
	if len(refs) == 0 {
		return nil
	}
	types, addrs := refArrays(refs)
	_, err := tx.Exec(ctx, `
		INSERT INTO userdata.entity_addresses (entity_id, user_id, chain_type, address)
		SELECT $1, $2, * FROM unnest($3::text[], $4::text[])
		ON CONFLICT DO NOTHING`, id, user, types, addrs)
	return err
}

var (
	//go:embed sql/insert_entities.sql
	insertEntitiesSQL string
	//go:embed sql/insert_entity_addresses.sql
	insertEntityAddressesSQL string
	//go:embed sql/lock_owner.sql
	lockOwnerSQL string
	//go:embed sql/all_operator_additions.sql
	allOperatorAdditionsSQL string
	//go:embed sql/lock_operator_additions.sql
	lockOperatorAdditionsSQL string
	//go:embed sql/delete_operator_additions.sql
	deleteOperatorAdditionsSQL string
	//go:embed sql/operator_additions_by_id.sql
	operatorAdditionsByIDSQL string
	//go:embed sql/entities_by_id.sql
	entitiesByIDSQL string
	//go:embed sql/entity_addresses_by_id.sql
	entityAddressesByIDSQL string
)

// CreateEntities creates every entity in one transaction, unless the user would then store more
// than max entities (an *app.OwnerLimitError; nothing is written). The count is taken with the
// user's version row locked, which every entity write locks, so concurrent creations cannot pass
// the cap together.
func (s *Store) CreateEntities(ctx context.Context, user string, in []app.EntityInput, max int) ([]app.Entity, error) {
	var out []app.Entity
	err := s.write(ctx, "create entities", func(tx pgx.Tx) (bool, error) {
		if err := bumpEntities(ctx, tx, user); err != nil {
			return false, err
		}
		if err := checkEntityRoom(ctx, tx, user, len(in), max); err != nil {
			return false, err
		}
		var err error
		if out, err = insertEntities(ctx, tx, user, in); err != nil {
			return false, err
		}
		changes := make([]*eventsv1.UserChange, 0, len(in))
		for i, e := range out {
			changes = append(changes, s.change(user, eventsv1.UserChange_KIND_ENTITY, eventsv1.UserChange_OP_UPSERT, e.ID, in[i].Addresses)...)
		}
		return true, s.enqueue(ctx, tx, changes...)
	})
	return out, err
}

// checkEntityRoom returns an *app.OwnerLimitError when the user would store more than max
// entities (their own and the operator entities they added to) with adding more. It locks the
// user's version row first (bumpEntities does too), so concurrent writes count one after another.
func checkEntityRoom(ctx context.Context, tx pgx.Tx, user string, adding, max int) error {
	if _, err := tx.Exec(ctx, lockOwnerSQL, user); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRow(ctx, entityCountSQL, user).Scan(&have); err != nil {
		return err
	}
	if have+adding > max {
		return &app.OwnerLimitError{What: "entities", Have: have, Adding: adding, Max: max}
	}
	return nil
}

// insertEntities inserts in, in order, with their addresses: two statements whatever the
// number of entities.
func insertEntities(ctx context.Context, tx pgx.Tx, user string, in []app.EntityInput) ([]app.Entity, error) {
	names := make([]string, len(in))
	notes := make([]string, len(in))
	shares := make([]bool, len(in))
	for i, ei := range in {
		names[i], notes[i], shares[i] = ei.Name, ei.Note, ei.Shareable != nil && *ei.Shareable
	}
	rows, err := tx.Query(ctx, insertEntitiesSQL, user, names, notes, shares)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Entity, error) { return scanEntity(r) })
	if err != nil {
		return nil, err
	}
	if len(out) != len(in) {
		return nil, fmt.Errorf("created %d entities of %d", len(out), len(in))
	}
	var ids, types, addrs []string
	for i := range out {
		out[i].Addresses = app.Group(in[i].Addresses)
		for _, r := range in[i].Addresses {
			ids, types, addrs = append(ids, out[i].ID), append(types, r.ChainType), append(addrs, r.Address)
		}
	}
	if len(ids) > 0 {
		if _, err := tx.Exec(ctx, insertEntityAddressesSQL, user, ids, types, addrs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Entities lists the user's entities, oldest first, with their addresses when asked.
func (s *Store) Entities(ctx context.Context, user string, withAddresses bool) ([]app.Entity, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+entityCols+` FROM userdata.entities
		WHERE user_id = $1 ORDER BY seq`, user)
	if err != nil {
		return nil, fmt.Errorf("list entities: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Entity, error) { return scanEntity(r) })
	if err != nil {
		return nil, fmt.Errorf("list entities: %w", err)
	}
	if out == nil {
		out = []app.Entity{}
	}
	if !withAddresses || len(out) == 0 {
		return out, nil
	}
	idx := make(map[string]int, len(out))
	for i := range out {
		idx[out[i].ID] = i
		out[i].Addresses = map[string][]string{}
	}
	rows, err = s.pool.Query(ctx, `
		SELECT entity_id::text, chain_type, address FROM userdata.entity_addresses
		WHERE user_id = $1 ORDER BY chain_type, address`, user)
	if err != nil {
		return nil, fmt.Errorf("list entity addresses: %w", err)
	}
	err = attachAddresses(rows, idx, out)
	if err != nil {
		return nil, fmt.Errorf("list entity addresses: %w", err)
	}
	return out, nil
}

// attachAddresses adds each (entity id, chain type, address) row of rows to its entity in out
// (idx: entity id → index), skipping ids out does not hold.
func attachAddresses(rows pgx.Rows, idx map[string]int, out []app.Entity) error {
	var id, ct, addr string
	_, err := pgx.ForEachRow(rows, []any{&id, &ct, &addr}, func() error {
		if i, ok := idx[id]; ok {
			out[i].Addresses[ct] = append(out[i].Addresses[ct], addr)
		}
		return nil
	})
	return err
}

// EntitiesByID returns the user's entities among ids (uuids), oldest first, with their
// addresses: two statements whatever the number of ids.
func (s *Store) EntitiesByID(ctx context.Context, user string, ids []string) ([]app.Entity, error) {
	rows, err := s.pool.Query(ctx, entitiesByIDSQL, user, ids)
	if err != nil {
		return nil, fmt.Errorf("entities by id: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (app.Entity, error) { return scanEntity(r) })
	if err != nil || len(out) == 0 {
		if err != nil {
			err = fmt.Errorf("entities by id: %w", err)
		}
		return []app.Entity{}, err
	}
	idx := make(map[string]int, len(out))
	found := make([]string, len(out))
	for i := range out {
		idx[out[i].ID] = i
		found[i] = out[i].ID
		out[i].Addresses = map[string][]string{}
	}
	rows, err = s.pool.Query(ctx, entityAddressesByIDSQL, user, found)
	if err != nil {
		return nil, fmt.Errorf("addresses of entities by id: %w", err)
	}
	err = attachAddresses(rows, idx, out)
	if err != nil {
		return nil, fmt.Errorf("addresses of entities by id: %w", err)
	}
	return out, nil
}

// Entity returns the user's entity id with its addresses.
func (s *Store) Entity(ctx context.Context, user, id string) (app.Entity, error) {
	return s.entity(ctx, s.pool, `SELECT `+entityCols+` FROM userdata.entities WHERE id = $1 AND user_id = $2`, id, user)
}

// SharedEntity returns entity id with its addresses when it is shareable.
func (s *Store) SharedEntity(ctx context.Context, id string) (app.Entity, error) {
	return s.entity(ctx, s.pool, `SELECT `+entityCols+` FROM userdata.entities WHERE id = $1 AND shareable`, id)
}

func (s *Store) entity(ctx context.Context, q querier, sql string, args ...any) (app.Entity, error) {
	e, err := scanEntity(q.QueryRow(ctx, sql, args...))
	if err != nil {
		return e, err
	}
	refs, err := addressesOf(ctx, q, e.ID)
	if err != nil {
		return e, fmt.Errorf("addresses of entity %s: %w", e.ID, err)
	}
	e.Addresses = app.Group(refs)
	return e, nil
}

// lockEntity locks the user's entity row for the rest of tx and returns its current addresses.
// Every change of an entity's address set takes this lock first, so counts read after it stay
// true until commit.
func lockEntity(ctx context.Context, tx pgx.Tx, user, id string) ([]app.AddressRef, error) {
	var found string
	err := tx.QueryRow(ctx, `SELECT id::text FROM userdata.entities WHERE id = $1 AND user_id = $2 FOR UPDATE`, id, user).Scan(&found)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, app.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return addressesOf(ctx, tx, id)
}

// ReplaceEntity overwrites name, note, the address set and (when given) shareable.
func (s *Store) ReplaceEntity(ctx context.Context, user, id string, in app.EntityInput) (app.Entity, error) {
	var out app.Entity
	err := s.write(ctx, "replace entity", func(tx pgx.Tx) (bool, error) {
		old, err := lockEntity(ctx, tx, user, id)
		if err != nil {
			return false, err
		}
		if err := bumpEntities(ctx, tx, user); err != nil {
			return false, err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM userdata.entity_addresses WHERE entity_id = $1`, id); err != nil {
			return false, err
		}
		if err := insertAddresses(ctx, tx, user, id, in.Addresses); err != nil {
			return false, err
		}
		out, err = scanEntity(tx.QueryRow(ctx, `
			UPDATE userdata.entities SET name = $3, note = $4, shareable = coalesce($5, shareable), updated_at = now()
			WHERE id = $1 AND user_id = $2 RETURNING `+entityCols, id, user, in.Name, in.Note, in.Shareable))
		if err != nil {
			return false, err
		}
		out.Addresses = app.Group(in.Addresses)
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_ENTITY, eventsv1.UserChange_OP_UPSERT, id, union(old, in.Addresses))...)
	})
	return out, err
}

// AddEntityAddresses adds refs to the user's entity id unless it would then hold more than max.
func (s *Store) AddEntityAddresses(ctx context.Context, user, id string, refs []app.AddressRef, max int) (app.Entity, error) {
	var out app.Entity
	err := s.write(ctx, "add entity addresses", func(tx pgx.Tx) (bool, error) {
		have, err := lockEntity(ctx, tx, user, id)
		if err != nil {
			return false, err
		}
		added := missing(have, refs)
		if len(have)+len(added) > max {
			return false, &app.LimitError{Have: len(have), Adding: len(added), Max: max}
		}
		if len(added) > 0 {
			if err := bumpEntities(ctx, tx, user); err != nil {
				return false, err
			}
		}
		if err := insertAddresses(ctx, tx, user, id, added); err != nil {
			return false, err
		}
		touch := `SELECT ` + entityCols + ` FROM userdata.entities WHERE id = $1 AND user_id = $2`
		if len(added) > 0 {
			touch = `UPDATE userdata.entities SET updated_at = now() WHERE id = $1 AND user_id = $2 RETURNING ` + entityCols
		}
		if out, err = scanEntity(tx.QueryRow(ctx, touch, id, user)); err != nil {
			return false, err
		}
		all := append(have, added...)
		app.SortRefs(all)
		out.Addresses = app.Group(all)
		if len(added) == 0 {
			return false, nil
		}
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_ENTITY, eventsv1.UserChange_OP_UPSERT, id, added)...)
	})
	return out, err
}

// DeleteEntity deletes the user's entity id and returns 1, or 0 when there was none.
func (s *Store) DeleteEntity(ctx context.Context, user, id string) (int, error) {
	var n int
	err := s.write(ctx, "delete entity", func(tx pgx.Tx) (bool, error) {
		old, err := lockEntity(ctx, tx, user, id)
		if errors.Is(err, app.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if err := bumpEntities(ctx, tx, user); err != nil {
			return false, err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM userdata.entities WHERE id = $1 AND user_id = $2`, id, user)
		if err != nil {
			return false, err
		}
		n = int(tag.RowsAffected())
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_ENTITY, eventsv1.UserChange_OP_DELETE, id, old)...)
	})
	return n, err
}

// AddOperatorAdditions records refs as the user's additions to operator entity entityID.
// Additions to one operator entity by one user are serialised by a transaction-scoped advisory
// lock, since there is no row of the operator entity here to lock. The first additions to an
// operator entity count as one of the user's entities (at most maxEntities, an
// *app.OwnerLimitError otherwise).
func (s *Store) AddOperatorAdditions(ctx context.Context, user, entityID string, refs []app.AddressRef, max, maxEntities int) ([]app.AddressRef, error) {
	var all []app.AddressRef
	err := s.write(ctx, "add operator entity additions", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, lockOperatorAdditionsSQL, user, entityID); err != nil {
			return false, err
		}
		have, err := operatorAdditions(ctx, tx, user, entityID)
		if err != nil {
			return false, err
		}
		added := missing(have, refs)
		if len(have)+len(added) > max {
			return false, &app.LimitError{Have: len(have), Adding: len(added), Max: max}
		}
		if len(have) == 0 && len(added) > 0 {
			if err := checkEntityRoom(ctx, tx, user, 1, maxEntities); err != nil {
				return false, err
			}
		}
		all = append(have, added...)
		app.SortRefs(all)
		if len(added) == 0 {
			return false, nil
		}
		types, addrs := refArrays(added)
		if _, err := tx.Exec(ctx, `
			INSERT INTO userdata.operator_additions (user_id, entity_id, chain_type, address)
			SELECT $1, $2, * FROM unnest($3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
			user, entityID, types, addrs); err != nil {
			return false, err
		}
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_ENTITY_ADDITIONS, eventsv1.UserChange_OP_UPSERT, entityID, added)...)
	})
	return all, err
}

// DeleteOperatorAdditions removes all of the user's additions to operator entity entityID and
// returns 1, or 0 when there were none. The operator entity then no longer counts as one of the
// user's entities. It takes the lock AddOperatorAdditions takes, so an addition racing it lands
// wholly before or after; the entity set's version moves and the removed addresses are
// announced (KIND_ENTITY_ADDITIONS, OP_DELETE) in the same transaction.
func (s *Store) DeleteOperatorAdditions(ctx context.Context, user, entityID string) (int, error) {
	n := 0
	err := s.write(ctx, "delete operator entity additions", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, lockOperatorAdditionsSQL, user, entityID); err != nil {
			return false, err
		}
		rows, err := tx.Query(ctx, deleteOperatorAdditionsSQL, user, entityID)
		if err != nil {
			return false, err
		}
		gone, err := pgx.CollectRows(rows, pgx.RowToStructByPos[app.AddressRef])
		if err != nil || len(gone) == 0 {
			return false, err
		}
		if err := bumpEntities(ctx, tx, user); err != nil {
			return false, err
		}
		app.SortRefs(gone)
		n = 1
		return true, s.enqueue(ctx, tx, s.change(user, eventsv1.UserChange_KIND_ENTITY_ADDITIONS, eventsv1.UserChange_OP_DELETE, entityID, gone)...)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// OperatorAdditions returns the user's additions to operator entity entityID.
func (s *Store) OperatorAdditions(ctx context.Context, user, entityID string) ([]app.AddressRef, error) {
	return operatorAdditions(ctx, s.pool, user, entityID)
}

// AllOperatorAdditions returns the user's additions to every operator entity, by entity id.
func (s *Store) AllOperatorAdditions(ctx context.Context, user string) (map[string][]app.AddressRef, error) {
	return s.additionsBy(ctx, allOperatorAdditionsSQL, user)
}

// OperatorAdditionsOf returns the user's additions to the operator entities ids, by entity id
// (one with none is absent).
func (s *Store) OperatorAdditionsOf(ctx context.Context, user string, ids []string) (map[string][]app.AddressRef, error) {
	return s.additionsBy(ctx, operatorAdditionsByIDSQL, user, ids)
}

// additionsBy runs sql, whose rows are (entity id, chain type, address), into additions by entity.
func (s *Store) additionsBy(ctx context.Context, sql string, args ...any) (map[string][]app.AddressRef, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]app.AddressRef{}
	for rows.Next() {
		var id string
		var r app.AddressRef
		if err := rows.Scan(&id, &r.ChainType, &r.Address); err != nil {
			return nil, err
		}
		out[id] = append(out[id], r)
	}
	return out, rows.Err()
}

func operatorAdditions(ctx context.Context, q querier, user, entityID string) ([]app.AddressRef, error) {
	rows, err := q.Query(ctx, `
		SELECT chain_type, address FROM userdata.operator_additions
		WHERE user_id = $1 AND entity_id = $2 ORDER BY chain_type, address`, user, entityID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[app.AddressRef])
}

// missing returns the refs not in have, in order.
func missing(have, refs []app.AddressRef) []app.AddressRef {
	in := make(map[app.AddressRef]bool, len(have))
	for _, r := range have {
		in[r] = true
	}
	var out []app.AddressRef
	for _, r := range refs {
		if !in[r] {
			in[r] = true
			out = append(out, r)
		}
	}
	return out
}

// union returns the distinct refs of a and b, sorted.
func union(a, b []app.AddressRef) []app.AddressRef {
	out := append(append([]app.AddressRef{}, a...), missing(a, b)...)
	app.SortRefs(out)
	return out
}
