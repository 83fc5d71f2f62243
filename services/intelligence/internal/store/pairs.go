package store

// Pair activity (migration 13). An operator entity's summary counts each transfer touching its
// attributed addresses once, as a user entity's does (transfers' activity): the sum of its
// addresses' activity counts a transfer between two of them twice, so the entity keeps an
// internal figure, the transfers between two of its addresses, that the summary subtracts.
// Transfer batches and reorgs add and take back their pairs' sums (intel.pair_activity) and the
// internal figure of the entity both addresses of a pair are attributed to now; a change of an
// address's entity moves its pairs' sums between entities (triggers, intel.apply_entity_moves),
// so the figure stays exact under relabels. docs/intelligence.md, "Entity summary volume".

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/pair_activity_add.sql
	pairActivityAddSQL string
	//go:embed sql/pair_activity_take_back.sql
	pairActivityTakeBackSQL string
	//go:embed sql/pair_activity_drop.sql
	pairActivityDropSQL string
	//go:embed sql/entity_internal_add.sql
	entityInternalAddSQL string
	//go:embed sql/entity_activity.sql
	entityActivitySQL string
	//go:embed sql/entity_additions_activity.sql
	entityAdditionsActivitySQL string
)

// pairSum is what transfers from one address to another (of a chain type) add.
type pairSum struct {
	usd float64
	n   int64
}

// pairArgs are a tally's pair sums as the statements' parallel arrays, negated when sign is -1.
func (y *tally) pairArgs(sign int64) []any {
	var ct, fr, to []string
	var usd []float64
	var n []int64
	for _, k := range sortedKeys(y.pairs, compareKey3) {
		p := y.pairs[k]
		ct, fr, to = append(ct, k[0]), append(fr, k[1]), append(to, k[2])
		usd, n = append(usd, float64(sign)*p.usd), append(n, sign*p.n)
	}
	return []any{ct, fr, to, usd, n}
}

// savePairs adds the tally's pairs to intel.pair_activity and to the internal figures of the
// entities that hold both their addresses, in one statement. The caller holds reorgLock (shared or exclusive), which
// entity moves take exclusively, so the attributions read are those the pairs count for.
func (y *tally) savePairs(ctx context.Context, tx pgx.Tx) error {
	if len(y.pairs) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, pairActivityAddSQL, y.pairArgs(1)...); err != nil {
		return fmt.Errorf("record pair activity and entities' internal activity: %w", err)
	}
	return nil
}

// takeBackPairs subtracts what savePairs added for the tally's pairs.
func (y *tally) takeBackPairs(ctx context.Context, tx pgx.Tx) error {
	if len(y.pairs) == 0 {
		return nil
	}
	pos, neg := y.pairArgs(1), y.pairArgs(-1)
	if _, err := tx.Exec(ctx, pairActivityTakeBackSQL, pos...); err != nil {
		return fmt.Errorf("take back pair activity: %w", err)
	}
	if _, err := tx.Exec(ctx, pairActivityDropSQL, pos[:3]...); err != nil {
		return fmt.Errorf("drop emptied pair activity: %w", err)
	}
	if _, err := tx.Exec(ctx, entityInternalAddSQL, neg...); err != nil {
		return fmt.Errorf("take back entities' internal activity: %w", err)
	}
	return nil
}

// EntityActivity is the precomputed activity of an operator entity's addresses.
type EntityActivity struct {
	NumAddresses  int64
	VolumeUSD     float64
	TransferCount int64
	FirstMs       int64 // 0 when no activity
	LastMs        int64
}

// EntityActivity returns the activity of the addresses attributed to entityID: each transfer
// touching one of them counted once, a transfer between two of them too.
func (s *Store) EntityActivity(ctx context.Context, entityID string) (EntityActivity, error) {
	var ea EntityActivity
	err := s.pool.QueryRow(ctx, entityActivitySQL, entityID).Scan(&ea.NumAddresses, &ea.VolumeUSD, &ea.TransferCount, &ea.FirstMs, &ea.LastMs)
	if err != nil {
		return ea, fmt.Errorf("entity %s activity: %w", entityID, err)
	}
	return ea, nil
}

// EntityActivityWith returns the activity of the addresses attributed to entityID and of adds (a
// caller's additions to it, normalized), each transfer touching one of them counted once, and
// the additions the entity does not hold already (counted in NumAddresses). Without adds it is
// EntityActivity. The two reads go in one batch, one round trip.
func (s *Store) EntityActivityWith(ctx context.Context, entityID string, adds []AddressKey) (EntityActivity, []AddressKey, error) {
	if len(adds) == 0 {
		ea, err := s.EntityActivity(ctx, entityID)
		return ea, nil, err
	}
	types, addrs := make([]string, len(adds)), make([]string, len(adds))
	for i, k := range adds {
		types[i], addrs[i] = k.ChainType, k.Address
	}
	b := &pgx.Batch{}
	var ea EntityActivity
	var outTypes, outAddrs []string
	var usd float64
	var n, first, last int64
	b.Queue(entityActivitySQL, entityID).QueryRow(func(r pgx.Row) error {
		return r.Scan(&ea.NumAddresses, &ea.VolumeUSD, &ea.TransferCount, &ea.FirstMs, &ea.LastMs)
	})
	b.Queue(entityAdditionsActivitySQL, entityID, types, addrs).QueryRow(func(r pgx.Row) error {
		return r.Scan(&outTypes, &outAddrs, &usd, &n, &first, &last)
	})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return ea, nil, fmt.Errorf("entity %s activity with additions: %w", entityID, err)
	}
	added := make([]AddressKey, len(outTypes))
	for i := range outTypes {
		added[i] = AddressKey{ChainType: outTypes[i], Address: outAddrs[i]}
	}
	ea.NumAddresses += int64(len(added))
	if n > 0 {
		if ea.TransferCount == 0 || first < ea.FirstMs {
			ea.FirstMs = first
		}
		ea.LastMs = max(ea.LastMs, last)
	}
	ea.VolumeUSD += usd
	ea.TransferCount += n
	return ea, added, nil
}
