package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/entity_tags_claim.sql
	entityTagsClaimSQL string
	//go:embed sql/entity_tags_compute.sql
	entityTagsComputeSQL string
	//go:embed sql/entity_tags_store.sql
	entityTagsStoreSQL string
	//go:embed sql/entity_tags_bump.sql
	entityTagsBumpSQL string
	//go:embed sql/entity_tags_release.sql
	entityTagsReleaseSQL string
)

// TagsClaimLease is how long a refresh round's claim keeps other refreshers off its entities. It
// outlives any round, so replicas do not recompute each other's entities; entities a refresher
// died holding wait that long.
const TagsClaimLease = 10 * time.Minute

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
	Entities    int // dirty entities claimed and recomputed (each once)
	Changed     int // of them, entities whose stored tags changed (and got a new details version)
	Republished int // addresses re-versioned so the publisher carries the new details
	Remarked    int // of them, entities marked again while they were recomputed: left marked for a later round
}

// claimedEntity is a dirty entity a round claimed, with the mark it claimed.
type claimedEntity struct {
	id, mark string
}

// RefreshEntityTags claims up to limit entities that triggers marked dirty (their addresses' tags
// or membership changed), recomputes each one's populated tags with one query, then, holding the
// version lock like every versioned writer (so the versions it takes are published in order),
// stores those that changed with a new entity version and re-versions one address of each changed
// (or republish-marked) entity, so the attribution publisher sends the entity's new details once
// instead of once per address. The recomputation, which reads all of an entity's addresses,
// runs without the version lock, so imports and other versioned writers do not wait for it; an
// entity a writer marked again meanwhile (its computation may have missed the change) keeps its
// mark and stored tags, and a later round recomputes it.
func (s *Store) RefreshEntityTags(ctx context.Context, limit int) (TagsRefresh, error) {
	var res TagsRefresh
	cs, err := s.claimEntityTags(ctx, limit)
	if err != nil || len(cs) == 0 {
		return res, err
	}
	ids, marks := make([]string, len(cs)), make([]string, len(cs))
	for i := range cs {
		ids[i], marks[i] = cs[i].id, cs[i].mark
	}
	res, err = s.computeAndStoreTags(ctx, cs)
	if err != nil {
		// Another round may take these entities at once rather than after the lease.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = s.pool.Exec(rctx, entityTagsReleaseSQL, ids, marks)
		return TagsRefresh{}, err
	}
	return res, nil
}

func (s *Store) claimEntityTags(ctx context.Context, limit int) ([]claimedEntity, error) {
	rows, err := s.pool.Query(ctx, entityTagsClaimSQL, limit, TagsClaimLease.Seconds())
	if err != nil {
		return nil, fmt.Errorf("claim dirty entities: %w", err)
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimedEntity, error) {
		var c claimedEntity
		return c, r.Scan(&c.id, &c.mark)
	})
	if err != nil {
		return nil, fmt.Errorf("claim dirty entities: %w", err)
	}
	return cs, nil
}

func (s *Store) computeAndStoreTags(ctx context.Context, cs []claimedEntity) (TagsRefresh, error) {
	res := TagsRefresh{Entities: len(cs)}
	ids, marks, tags := make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs))
	for i := range cs {
		if err := s.pool.QueryRow(ctx, entityTagsComputeSQL, cs[i].id).Scan(&tags[i]); err != nil {
			return res, fmt.Errorf("entity %s tags: %w", cs[i].id, err)
		}
		ids[i], marks[i] = cs[i].id, cs[i].mark
	}
	err := s.inTx(ctx, true, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, entityTagsStoreSQL, ids, marks, tags)
		if err != nil {
			return fmt.Errorf("store entity tags: %w", err)
		}
		type stored struct {
			id                 string
			republish, changed bool
		}
		done, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stored, error) {
			var d stored
			return d, r.Scan(&d.id, &d.republish, &d.changed)
		})
		if err != nil {
			return fmt.Errorf("store entity tags: %w", err)
		}
		res.Remarked = len(cs) - len(done)
		for _, d := range done {
			if d.changed {
				res.Changed++
			}
			if !d.changed && !d.republish {
				continue
			}
			tag, err := tx.Exec(ctx, entityTagsBumpSQL, d.id)
			if err != nil {
				return fmt.Errorf("republish entity %s: %w", d.id, err)
			}
			res.Republished += int(tag.RowsAffected())
		}
		return nil
	})
	return res, err
}
