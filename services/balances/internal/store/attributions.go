package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"
)

// Entity is an operator entity as attributions describe it. Description and Tags are read by
// Entities only (the entity object of /balances/entity); Tags nil is stored as no tags. Version
// is that of the details (0 from publishers that predate it): the store keeps the newest.
type Entity struct {
	ID, Name, Type, Note, Service, Website, Twitter, LinkedIn string
	Description                                               string
	Tags                                                      []Tag
	Version                                                   int64
}

// Tag is one of an entity's populated tags.
type Tag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int32  `json:"rank"`
	Params          string `json:"tagParams"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain,omitempty"`
}

// Attribution is what is known about an address; Tombstone means nothing is any more.
type Attribution struct {
	ChainType, Address string
	Entity, Predicted  *Entity
	Label              string
	DepositServiceID   string
	IsContract         bool
	Version            int64
	Tombstone          bool
}

var attrCols = []string{"chain_type", "address", "entity_id", "label", "predicted_id", "deposit_service_id", "is_contract", "version", "tombstone"}

// ApplyAttributions stores attributions (one per address; an older version than the stored one
// changes nothing) and moves the balances and snapshots of every address whose entity changed
// from the old entity to the new one, in the same transaction. It returns how many moved.
func (s *Store) ApplyAttributions(ctx context.Context, as []Attribution) (int, error) {
	if len(as) == 0 {
		return 0, nil
	}
	moved := 0
	err := s.write(ctx, "apply attributions", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, q("stage_attr")); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage_attr"}, attrCols, pgx.CopyFromSlice(len(as), func(i int) ([]any, error) {
			a := as[i]
			var eid, pid string
			if a.Entity != nil {
				eid = a.Entity.ID
			}
			if a.Predicted != nil {
				pid = a.Predicted.ID
			}
			return []any{a.ChainType, a.Address, eid, a.Label, pid, a.DepositServiceID, a.IsContract, a.Version, a.Tombstone}, nil
		})); err != nil {
			return err
		}
		if err := s.upsertEntities(ctx, tx, as); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, q("attr_moves"))
		if err != nil {
			return err
		}
		var m [4][]string
		for rows.Next() {
			var v [4]string
			if err := rows.Scan(&v[0], &v[1], &v[2], &v[3]); err != nil {
				rows.Close()
				return err
			}
			for i := range v {
				m[i] = append(m[i], v[i])
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		moved = len(m[0])
		b := &pgx.Batch{}
		if moved > 0 {
			b.Queue(q("move_change"), m[0], m[1], m[2], m[3])
			b.Queue(q("move_current"), m[0], m[1], m[2], m[3])
		}
		b.Queue(q("attr_upsert"))
		b.Queue(q("attr_delete"))
		return tx.SendBatch(ctx, b).Close()
	})
	return moved, err
}

// upsertEntities stores the details of the entities the attributions carry: per entity those of
// the highest version in the batch (the latest of equal versions), and in the store only over
// details of a version not higher (sql/entity_upsert.sql).
func (s *Store) upsertEntities(ctx context.Context, tx pgx.Tx, as []Attribution) error {
	newest := map[string]*Entity{}
	var ids []string
	for _, a := range as {
		for _, e := range []*Entity{a.Entity, a.Predicted} {
			if e == nil || e.ID == "" {
				continue
			}
			prev, seen := newest[e.ID]
			if !seen {
				ids = append(ids, e.ID)
			}
			if !seen || e.Version >= prev.Version {
				newest[e.ID] = e
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var cols [10][]string
	versions := make([]int64, len(ids))
	for i, id := range ids {
		e := newest[id]
		tags := e.Tags
		if tags == nil {
			tags = []Tag{}
		}
		js, err := json.Marshal(tags)
		if err != nil {
			return err
		}
		for j, v := range []string{e.ID, e.Name, e.Type, e.Note, e.Service, e.Website, e.Twitter, e.LinkedIn, e.Description, string(js)} {
			cols[j] = append(cols[j], v)
		}
		versions[i] = e.Version
	}
	_, err := tx.Exec(ctx, q("entity_upsert"), cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], cols[9], versions)
	return err
}
