package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/entity_tags_claim.sql
	entityTagsClaimSQL string
	//go:embed sql/entity_tags_update.sql
	entityTagsUpdateSQL string
	//go:embed sql/entity_tags_bump.sql
	entityTagsBumpSQL string
	//go:embed sql/entity_tags_done.sql
	entityTagsDoneSQL string
)

// storedTag is one element of intel.entities.populated_tags (sql/entity_tags_update.sql).
type storedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int    `json:"rank"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain"`
	Params          string `json:"params"`
}

func decodeTags(js []byte) ([]attribution.PopulatedTag, error) {
	if len(js) == 0 {
		return nil, nil
	}
	var ts []storedTag
	if err := json.Unmarshal(js, &ts); err != nil {
		return nil, fmt.Errorf("populated tags: %w", err)
	}
	out := make([]attribution.PopulatedTag, len(ts))
	for i, t := range ts {
		out[i] = attribution.PopulatedTag{Tag: attribution.Tag{ID: t.ID, Label: t.Label, Rank: t.Rank, DisablePage: t.DisablePage,
			ExcludeEntities: t.ExcludeEntities, Chain: t.Chain}, Params: t.Params}
	}
	return out, nil
}

// TagsRefresh says what one RefreshEntityTags round did.
type TagsRefresh struct {
	Entities    int // dirty entities taken (each recomputed once)
	Changed     int // of them, entities whose stored tags changed (and got a new details version)
	Republished int // addresses re-versioned so the publisher carries the new details
}

// RefreshEntityTags takes up to limit entities that triggers marked dirty (their addresses' tags
// or membership changed), recomputes each one's populated tags with one query, stores those that
// changed with a new entity version, and re-versions one address of each changed (or
// republish-marked) entity, so the attribution publisher sends the entity's new details once
// instead of once per address. It holds the version lock like every versioned writer, so the
// versions it takes are published in order and concurrent refreshers (replicas, an import
// command) take turns.
func (s *Store) RefreshEntityTags(ctx context.Context, limit int) (TagsRefresh, error) {
	var res TagsRefresh
	// The version lock is global: a round with nothing to do does not take it.
	var pending bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM intel.entity_tags_dirty)").Scan(&pending); err != nil || !pending {
		return res, err
	}
	err := s.inTx(ctx, true, func(tx pgx.Tx) error {
		res = TagsRefresh{}
		rows, err := tx.Query(ctx, entityTagsClaimSQL, limit)
		if err != nil {
			return fmt.Errorf("dirty entities: %w", err)
		}
		type dirty struct {
			id        string
			republish bool
		}
		ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (dirty, error) {
			var d dirty
			return d, r.Scan(&d.id, &d.republish)
		})
		if err != nil {
			return fmt.Errorf("dirty entities: %w", err)
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.id
			changed, err := refreshOne(ctx, tx, d.id)
			if err != nil {
				return err
			}
			if changed {
				res.Changed++
			}
			if !changed && !d.republish {
				continue
			}
			tag, err := tx.Exec(ctx, entityTagsBumpSQL, d.id)
			if err != nil {
				return fmt.Errorf("republish entity %s: %w", d.id, err)
			}
			res.Republished += int(tag.RowsAffected())
		}
		res.Entities = len(ds)
		if len(ids) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, entityTagsDoneSQL, ids); err != nil {
			return fmt.Errorf("clear dirty entities: %w", err)
		}
		return nil
	})
	return res, err
}

func refreshOne(ctx context.Context, tx pgx.Tx, id string) (bool, error) {
	var got string
	err := tx.QueryRow(ctx, entityTagsUpdateSQL, id).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("entity %s tags: %w", id, err)
	}
	return true, nil
}
