package store

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/address_tags_many.sql
	addressTagsManySQL string
	//go:embed sql/entity_types.sql
	entityTypesSQL string
	//go:embed sql/cluster_activity.sql
	clusterActivitySQL string
)

// AddressKey names an address of a chain type.
type AddressKey struct{ ChainType, Address string }

// AddressTagsMany returns the tags of each of keys that has any, by rank.
func (s *Store) AddressTagsMany(ctx context.Context, keys []AddressKey) (map[AddressKey][]PopulatedTag, error) {
	types, addrs := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		types[i], addrs[i] = k.ChainType, k.Address
	}
	rows, err := s.pool.Query(ctx, addressTagsManySQL, types, addrs)
	if err != nil {
		return nil, fmt.Errorf("load tags of %d addresses: %w", len(keys), err)
	}
	out := map[AddressKey][]PopulatedTag{}
	var k AddressKey
	var p PopulatedTag
	_, err = pgx.ForEachRow(rows, []any{&k.ChainType, &k.Address, &p.Tag.ID, &p.Tag.Label, &p.Tag.Rank, &p.Tag.DisablePage,
		&p.Tag.ExcludeEntities, &p.Tag.Chain, &p.Params}, func() error {
		out[k] = append(out[k], p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load tags of %d addresses: %w", len(keys), err)
	}
	return out, nil
}

// EntityTypes returns the types operator entities have, sorted.
func (s *Store) EntityTypes(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, entityTypesSQL)
	if err != nil {
		return nil, fmt.Errorf("entity types: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("entity types: %w", err)
	}
	return out, nil
}

// ClusterActivity is a cluster's members and the sums of their activity.
type ClusterActivity struct {
	Members []AddressKey
	EntityActivity
	// TooLarge: the cluster has more members than the read allowed; Members holds one more than
	// that many of them, and the sums were not read.
	TooLarge bool
}

// ClusterActivity returns the members of cluster id (none when it does not exist) and their
// activity, a transfer between two members counted once (sql/cluster_activity.sql), for a
// cluster of at most maxMembers members; of a larger one it reads maxMembers+1 members and
// nothing else (TooLarge).
func (s *Store) ClusterActivity(ctx context.Context, id string, maxMembers int) (ClusterActivity, error) {
	var ca ClusterActivity
	var k AddressKey
	var vol, internalVol float64
	var n, first, last, internalN int64
	// A cluster of thousands of members is costed above the server's jit_above_cost, and
	// compiling the statement takes several times what running it does. The settings and the
	// statement go in one batch, one round trip: a batch runs in one implicit transaction (one
	// Sync), which local settings last for, so no connection keeps them
	// (TestClusterActivityOneRoundTrip).
	br := s.pool.SendBatch(ctx, customPlanNoJIT(clusterActivitySQL, id, maxMembers))
	_, err := br.Exec()
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			_, err = pgx.ForEachRow(rows, []any{&k.ChainType, &k.Address, &vol, &n, &first, &last, &internalVol, &internalN}, func() error {
				ca.Members = append(ca.Members, k)
				ca.VolumeUSD += vol
				ca.TransferCount += n
				if n > 0 {
					if ca.FirstMs == 0 || first < ca.FirstMs {
						ca.FirstMs = first
					}
					ca.LastMs = max(ca.LastMs, last)
				}
				return nil
			})
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ca, fmt.Errorf("cluster %s: %w", id, err)
	}
	ca.NumAddresses = int64(len(ca.Members))
	if len(ca.Members) > maxMembers {
		return ClusterActivity{Members: ca.Members, EntityActivity: EntityActivity{NumAddresses: ca.NumAddresses}, TooLarge: true}, nil
	}
	// Every row carries the same internal figure: subtract it once.
	ca.VolumeUSD -= internalVol
	ca.TransferCount -= internalN
	return ca, nil
}

// customPlanNoJIT is a batch running sql with JIT compilation off and a plan made for its
// arguments: the settings (transaction-local, as SET LOCAL), then the statement, sent together
// and run in the batch's implicit transaction, which the settings end with. Read the settings' result first,
// then the statement's. A custom plan each time, because pgx prepares the statement and
// PostgreSQL turns to a generic plan after five runs: for the cluster statement, one not knowing
// the member limit, it joined the members with their pairs in a nested loop, 20 s a summary
// where the custom plan takes 0.2 s (BenchmarkClusterActivity).
func customPlanNoJIT(sql string, args ...any) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue("SELECT set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)")
	b.Queue(sql, args...)
	return b
}
