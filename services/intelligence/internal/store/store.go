// Package store is the intelligence service's SQL over the intel schema: imports and their
// resolution into attributions, the versioned changes the cache and the publisher follow,
// heuristic inputs and results, contracts, tokens and prices.
package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("not found")

// Store is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	tags   tagsOptions
	prunes *journalPrunes
}

// Option configures a Store at construction.
type Option func(*Store)

// New returns a store over pool.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{pool: pool, tags: tagsOptions{retryFirst: TagsRetryFirst, retryMax: TagsRetryMax}, prunes: &journalPrunes{cutoff: map[string]int64{}}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Pool returns the underlying pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// versionLock serialises every transaction that takes attribution versions, so that versions
// become visible in order and a reader following "version > last seen" never skips one.
const versionLock = 0x696e74656c // "intel"

func lockVersions(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(versionLock))
	return err
}

func (s *Store) inTx(ctx context.Context, versioned bool, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if versioned {
		if err := lockVersions(ctx, tx); err != nil {
			return err
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

const entityCols = "id, name, type, note, description, website, twitter, linkedin, service, version"

func scanEntity(row pgx.Row) (attribution.Entity, error) {
	var e attribution.Entity
	err := row.Scan(&e.ID, &e.Name, &e.Type, &e.Note, &e.Description, &e.Website, &e.Twitter, &e.LinkedIn, &e.Service, &e.Version)
	return e, err
}

// EntitiesSince returns entities changed after version, in version order.
func (s *Store) EntitiesSince(ctx context.Context, version int64, limit int) ([]attribution.Entity, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+entityCols+" FROM intel.entities WHERE version > $1 ORDER BY version LIMIT $2", version, limit)
	if err != nil {
		return nil, fmt.Errorf("entities since %d: %w", version, err)
	}
	defer rows.Close()
	var out []attribution.Entity
	for rows.Next() {
		e, err := scanEntity(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

const addressCols = `chain_type, address, COALESCE(entity_id, ''), label, confidence, source,
	COALESCE(predicted_entity_id, ''), COALESCE(deposit_service_id, ''), is_contract, cluster_ids, version`

func scanAddress(row pgx.Row) (attribution.Address, error) {
	var a attribution.Address
	err := row.Scan(&a.ChainType, &a.Address, &a.EntityID, &a.Label, &a.Confidence, &a.Source,
		&a.PredictedEntity, &a.DepositServiceID, &a.IsContract, &a.ClusterIDs, &a.Version)
	if len(a.ClusterIDs) == 0 {
		a.ClusterIDs = nil
	}
	return a, err
}

// AddressesSince returns attributions changed after version, in version order.
func (s *Store) AddressesSince(ctx context.Context, version int64, limit int) ([]attribution.Address, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+addressCols+" FROM intel.addresses WHERE version > $1 ORDER BY version LIMIT $2", version, limit)
	if err != nil {
		return nil, fmt.Errorf("addresses since %d: %w", version, err)
	}
	defer rows.Close()
	var out []attribution.Address
	for rows.Next() {
		a, err := scanAddress(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Entity returns one entity.
func (s *Store) Entity(ctx context.Context, id string) (attribution.Entity, error) {
	e, err := scanEntity(s.pool.QueryRow(ctx, "SELECT "+entityCols+" FROM intel.entities WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("load entity %s: %w", id, err)
	}
	return e, nil
}

// EntityTags returns the tags of an entity: those of its addresses, except tags that are not
// propagated to entities.
func (s *Store) EntityTags(ctx context.Context, entityID string) ([]PopulatedTag, error) {
	return s.populatedTags(ctx, `SELECT DISTINCT t.id, t.label, t.rank, t.disable_page, t.exclude_entities, t.chain, at.params
		FROM intel.addresses a
		JOIN intel.address_tags at ON at.chain_type = a.chain_type AND at.address = a.address
		JOIN intel.tags t ON t.id = at.tag_id
		WHERE a.entity_id = $1 AND NOT t.exclude_entities`, entityID)
}

// PopulatedTag is a tag with one parameter value.
type PopulatedTag = attribution.PopulatedTag

func (s *Store) populatedTags(ctx context.Context, q string, args ...any) ([]PopulatedTag, error) {
	rows, err := s.pool.Query(ctx, q+" ORDER BY t.rank, t.id, at.params", args...)
	if err != nil {
		return nil, fmt.Errorf("load tags: %w", err)
	}
	defer rows.Close()
	out := []PopulatedTag{}
	for rows.Next() {
		var p PopulatedTag
		if err := rows.Scan(&p.Tag.ID, &p.Tag.Label, &p.Tag.Rank, &p.Tag.DisablePage, &p.Tag.ExcludeEntities, &p.Tag.Chain, &p.Params); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Tag returns a tag definition.
func (s *Store) Tag(ctx context.Context, id string) (attribution.Tag, error) {
	var t attribution.Tag
	err := s.pool.QueryRow(ctx, "SELECT id, label, rank, disable_page, exclude_entities, chain FROM intel.tags WHERE id = $1", id).
		Scan(&t.ID, &t.Label, &t.Rank, &t.DisablePage, &t.ExcludeEntities, &t.Chain)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("load tag %s: %w", id, err)
	}
	return t, nil
}

// TagParams returns the distinct parameter values of a tag, in order, paged.
func (s *Store) TagParams(ctx context.Context, id string, limit, offset int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT params FROM intel.address_tags WHERE tag_id = $1 ORDER BY params LIMIT $2 OFFSET $3`, id, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("tag %s params: %w", id, err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// TagSummary counts what carries a tag.
type TagSummary struct {
	Addresses, Entities, Params int64
}

// TagSummary counts the addresses, entities and distinct parameter values of a tag.
func (s *Store) TagSummary(ctx context.Context, id string) (TagSummary, error) {
	var ts TagSummary
	err := s.pool.QueryRow(ctx, `SELECT count(DISTINCT (at.chain_type, at.address)), count(DISTINCT a.entity_id), count(DISTINCT at.params)
		FROM intel.address_tags at
		LEFT JOIN intel.addresses a ON a.chain_type = at.chain_type AND a.address = at.address
		WHERE at.tag_id = $1`, id).Scan(&ts.Addresses, &ts.Entities, &ts.Params)
	if err != nil {
		return ts, fmt.Errorf("tag %s summary: %w", id, err)
	}
	return ts, nil
}
