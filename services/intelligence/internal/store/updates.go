package store

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// updatesSQL is a feed's statement for each direction: oldest first (asc) and newest first
// (desc). They are separate statements, not one with the direction as a parameter, so each is a
// plain range on seq ordered by seq, which the change_log (kind, seq) index serves.
type updatesSQL struct{ asc, desc string }

var (
	//go:embed sql/updates_entities_asc.sql
	updatesEntitiesAscSQL string
	//go:embed sql/updates_entities_desc.sql
	updatesEntitiesDescSQL string
	//go:embed sql/updates_addresses_asc.sql
	updatesAddressesAscSQL string
	//go:embed sql/updates_addresses_desc.sql
	updatesAddressesDescSQL string
	//go:embed sql/updates_tags_asc.sql
	updatesTagsAscSQL string
	//go:embed sql/updates_tags_desc.sql
	updatesTagsDescSQL string
	//go:embed sql/updates_address_tags_asc.sql
	updatesAddressTagsAscSQL string
	//go:embed sql/updates_address_tags_desc.sql
	updatesAddressTagsDescSQL string

	updatesEntitiesSQL    = updatesSQL{updatesEntitiesAscSQL, updatesEntitiesDescSQL}
	updatesAddressesSQL   = updatesSQL{updatesAddressesAscSQL, updatesAddressesDescSQL}
	updatesTagsSQL        = updatesSQL{updatesTagsAscSQL, updatesTagsDescSQL}
	updatesAddressTagsSQL = updatesSQL{updatesAddressTagsAscSQL, updatesAddressTagsDescSQL}
)

// UpdatesQuery selects change-log entries: after sequence After (before it when Desc, newest
// first), at times From..To, of Status ("" for all), at most Limit; and, by feed, the filters on
// the record as it is now (nil or "": any; see sql/updates_*.sql): ChainTypes, Addresses,
// EntityIDs, EntityTypes, Label, Service, DepositIDs, TagIDs, TagParams, Categories.
type UpdatesQuery struct {
	After      int64
	From, To   time.Time
	Status     string
	Limit      int
	Desc       bool
	ChainTypes []string
	Addresses  []string
	EntityIDs  []string
	EntityType []string
	Label      string
	Service    *bool
	DepositIDs []string
	TagIDs     []string
	TagParams  *string
	Categories []string
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
	ChainType       string  `json:"-"`
	Address         string  `json:"address"`
	Chain           string  `json:"chain"`
	EntityID        *string `json:"entity_id"`
	EntityName      *string `json:"entity_name"`
	EntityType      *string `json:"entity_type"`
	Label           *string `json:"label"`
	DepositExchange *string `json:"deposit_exchange_id"`
	Service         bool    `json:"service"`
	// ClusterIDs and PredictedEntity are filled always and shown on request (includeClusters,
	// includeEntityPredictions); PopulatedTags is filled by the caller on request (includeTags).
	ClusterIDs      *[]string        `json:"cluster_ids,omitempty"`
	PredictedEntity *PredictedEntity `json:"predicted_entity,omitempty"`
	PopulatedTags   any              `json:"populated_tags,omitempty"`
	Change
}

// PredictedEntity is the entity an address update's address is predicted to belong to.
type PredictedEntity struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	Type *string `json:"type"`
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

func updates[T any](ctx context.Context, s *Store, stmts updatesSQL, q UpdatesQuery, filters []any, scan func(pgx.CollectableRow) (T, error)) ([]T, error) {
	after, sql := q.After, stmts.asc
	if q.Desc {
		sql = stmts.desc
		if after == 0 {
			after = math.MaxInt64
		}
	}
	args := append([]any{after, q.From, q.To, q.Status, q.Limit}, filters...)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("change log: %w", err)
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("change log: %w", err)
	}
	return out, nil
}

//go:embed sql/change_log_head.sql
var changeLogHeadSQL string

// ChangeLogHead returns the newest change's sequence number (0 when there is none): the
// position of every feed at this moment (sql/change_log_head.sql).
func (s *Store) ChangeLogHead(ctx context.Context) (int64, error) {
	var head int64
	if err := s.pool.QueryRow(ctx, changeLogHeadSQL).Scan(&head); err != nil {
		return 0, fmt.Errorf("change log head: %w", err)
	}
	return head, nil
}

// EntityUpdates returns entity changes selected by q, in sequence order.
func (s *Store) EntityUpdates(ctx context.Context, q UpdatesQuery) ([]EntityUpdate, error) {
	return updates(ctx, s, updatesEntitiesSQL, q, []any{null(q.EntityIDs), null(q.EntityType)}, func(r pgx.CollectableRow) (EntityUpdate, error) {
		var u EntityUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ID, &u.Name, &u.Type, &u.Website, &u.Twitter, &u.LinkedIn)
		u.At = u.At.UTC()
		return u, err
	})
}

// AddressUpdates returns address attribution changes selected by q, in sequence order.
func (s *Store) AddressUpdates(ctx context.Context, q UpdatesQuery) ([]AddressUpdate, error) {
	filters := []any{null(q.ChainTypes), null(q.Addresses), null(q.EntityIDs), null(q.EntityType), q.Label, q.Service,
		null(q.DepositIDs), null(q.TagIDs), q.TagParams}
	return updates(ctx, s, updatesAddressesSQL, q, filters, func(r pgx.CollectableRow) (AddressUpdate, error) {
		var u AddressUpdate
		var clusters []string
		var service *bool
		var pid, pname, ptype *string
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ChainType, &u.Address, &u.EntityID, &u.EntityName, &u.EntityType, &u.Label,
			&u.DepositExchange, &clusters, &service, &pid, &pname, &ptype)
		u.At = u.At.UTC()
		if clusters == nil {
			clusters = []string{}
		}
		u.ClusterIDs = &clusters
		u.Service = service != nil && *service
		if pid != nil && pname != nil {
			u.PredictedEntity = &PredictedEntity{ID: *pid, Name: *pname, Type: ptype}
		}
		return u, err
	})
}

// TagUpdates returns tag changes selected by q, in sequence order.
func (s *Store) TagUpdates(ctx context.Context, q UpdatesQuery) ([]TagUpdate, error) {
	return updates(ctx, s, updatesTagsSQL, q, []any{null(q.TagIDs), null(q.Categories)}, func(r pgx.CollectableRow) (TagUpdate, error) {
		var u TagUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ID, &u.Name, &u.Rank, &u.AddressCount, &u.EntityCount)
		u.At = u.At.UTC()
		return u, err
	})
}

// AddressTagUpdates returns address tag changes selected by q, in sequence order.
func (s *Store) AddressTagUpdates(ctx context.Context, q UpdatesQuery) ([]AddressTagUpdate, error) {
	filters := []any{null(q.ChainTypes), null(q.Addresses), null(q.TagIDs), q.TagParams, null(q.EntityIDs), null(q.Categories)}
	return updates(ctx, s, updatesAddressTagsSQL, q, filters, func(r pgx.CollectableRow) (AddressTagUpdate, error) {
		var u AddressTagUpdate
		err := r.Scan(&u.Seq, &u.At, &u.Status, &u.ChainType, &u.Address, &u.TagID, &u.TagParams, &u.TagName, &u.Rank,
			&u.EntityID, &u.EntityName, &u.EntityType, &u.Label)
		u.At = u.At.UTC()
		return u, err
	})
}

// null is a filter list as a query argument: NULL (any) when empty.
func null(vs []string) any {
	if len(vs) == 0 {
		return nil
	}
	return vs
}
