package store

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/updates_entities.sql
	updatesEntitiesSQL string
	//go:embed sql/updates_addresses.sql
	updatesAddressesSQL string
	//go:embed sql/updates_tags.sql
	updatesTagsSQL string
	//go:embed sql/updates_address_tags.sql
	updatesAddressTagsSQL string
)

// UpdatesQuery selects change-log entries: after sequence After, at times From..To, of Status
// ("" for all), at most Limit.
type UpdatesQuery struct {
	After    int64
	From, To time.Time
	Status   string
	Limit    int
}

// Change is what every change-log entry carries.
type Change struct {
	Seq    int64     `json:"diff_seq"`
	At     time.Time `json:"diff_ts"`
	Status string    `json:"status"`
}

// EntityUpdate is a change of an operator entity, with the entity as it is now.
type EntityUpdate struct {
	ID       string  `json:"id"`
	Name     *string `json:"name"`
	Type     *string `json:"type"`
	Website  *string `json:"website_url"`
	Twitter  *string `json:"twitter_url"`
	LinkedIn *string `json:"linkedin_url"`
	Change
}

// AddressUpdate is a change of an address's attribution, with the attribution as it is now.
// Chain is filled in by the caller from ChainType.
type AddressUpdate struct {
	ChainType       string   `json:"-"`
	Address         string   `json:"address"`
	Chain           string   `json:"chain"`
	EntityID        *string  `json:"entity_id"`
	EntityName      *string  `json:"entity_name"`
	EntityType      *string  `json:"entity_type"`
	Label           *string  `json:"label"`
	DepositExchange *string  `json:"deposit_exchange_id"`
	ClusterIDs      []string `json:"cluster_ids"`
	Change
}

// TagUpdate is a change of a tag definition, with the tag as it is now.
type TagUpdate struct {
	ID           string  `json:"id"`
	Name         *string `json:"tag_name"`
	Rank         *int    `json:"rank"`
	Category     *string `json:"category"`
	AddressCount int64   `json:"address_count"`
	EntityCount  int64   `json:"entity_count"`
	Change
}

// AddressTagUpdate is a tag put on or taken off an address.
type AddressTagUpdate struct {
	ChainType  string  `json:"-"`
	Address    string  `json:"address"`
	Chain      string  `json:"chain"`
	TagID      string  `json:"tag_id"`
	TagParams  string  `json:"tag_params"`
	TagName    *string `json:"tag_name"`
	Rank       *int    `json:"rank"`
	EntityID   *string `json:"entity_id"`
	EntityName *string `json:"entity_name"`
	EntityType *string `json:"entity_type"`
	Label      *string `json:"label"`
	Change
}

func updates[T any](ctx context.Context, s *Store, sql string, q UpdatesQuery, scan func(pgx.CollectableRow) (T, error)) ([]T, error) {
	rows, err := s.pool.Query(ctx, sql, q.After, q.From, q.To, q.Status, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("change log: %w", err)
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("change log: %w", err)
	}
	return out, nil
}

// EntityUpdates returns entity changes selected by q, in sequence order.
func (s *Store) EntityUpdates(ctx context.Context, q UpdatesQuery) ([]EntityUpdate, error) {
	return updates(ctx, s, updatesEntitiesSQL, q, func(r pgx.CollectableRow) (EntityUpdate, error) {
		var u EntityUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ID, &u.Name, &u.Type, &u.Website, &u.Twitter, &u.LinkedIn)
		u.At = u.At.UTC()
		return u, err
	})
}

// AddressUpdates returns address attribution changes selected by q, in sequence order.
func (s *Store) AddressUpdates(ctx context.Context, q UpdatesQuery) ([]AddressUpdate, error) {
	return updates(ctx, s, updatesAddressesSQL, q, func(r pgx.CollectableRow) (AddressUpdate, error) {
		var u AddressUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ChainType, &u.Address, &u.EntityID, &u.EntityName, &u.EntityType, &u.Label,
			&u.DepositExchange, &u.ClusterIDs)
		u.At = u.At.UTC()
		if u.ClusterIDs == nil {
			u.ClusterIDs = []string{}
		}
		return u, err
	})
}

// TagUpdates returns tag changes selected by q, in sequence order.
func (s *Store) TagUpdates(ctx context.Context, q UpdatesQuery) ([]TagUpdate, error) {
	return updates(ctx, s, updatesTagsSQL, q, func(r pgx.CollectableRow) (TagUpdate, error) {
		var u TagUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ID, &u.Name, &u.Rank, &u.AddressCount, &u.EntityCount)
		u.At = u.At.UTC()
		return u, err
	})
}

// AddressTagUpdates returns address tag changes selected by q, in sequence order.
func (s *Store) AddressTagUpdates(ctx context.Context, q UpdatesQuery) ([]AddressTagUpdate, error) {
	return updates(ctx, s, updatesAddressTagsSQL, q, func(r pgx.CollectableRow) (AddressTagUpdate, error) {
		var u AddressTagUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ChainType, &u.Address, &u.TagID, &u.TagParams, &u.TagName, &u.Rank,
			&u.EntityID, &u.EntityName, &u.EntityType, &u.Label)
		u.At = u.At.UTC()
		return u, err
	})
}
