package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
	"github.com/jackc/pgx/v5"
)

// ApplyFlows stores the batch's transfers, one row per copy (chain, natural id, block hash), and
// counts each natural id once in the rollups: in the copy whose block is not orphaned (the one
// counted already while its block stays so). A redelivered copy changes nothing; a copy of an
// orphaned block is stored uncounted; a copy of an id counted in another block waits until a
// reorg orphans that block.
//
// A batch that must wait for a close building its chains' hours does so outside the chains'
// writer locks (errCloseBuilding), then runs again from the start: the other batches of its
// chains, of hours the build does not need, commit meanwhile.
func (s *Store) ApplyFlows(ctx context.Context, fs []app.Flow) error {
	if h := s.FlowHorizon(); !h.IsZero() {
		fs = slices.DeleteFunc(slices.Clone(fs), func(f app.Flow) bool { return f.Time.Before(h) })
	}
	if len(fs) == 0 {
		return nil
	}
	chains, ids, _ := flowColumns(fs)
	for {
		err := s.write(ctx, "apply flows", func(tx pgx.Tx) (bool, error) {
			return false, s.applyFlows(ctx, tx, fs, chains, ids)
		})
		if !errors.Is(err, errCloseBuilding) {
			return err
		}
		// Rolled back, nothing written and no lock held: wait for the build alone (the locks
		// are released as the statement's own transaction ends), then read everything again.
		if _, err := s.pool.Exec(ctx, sqlFlowsCloseShared, chains); err != nil {
			return fmt.Errorf("apply flows: wait for the close: %w", err)
		}
	}
}

// errCloseBuilding is the error that rolls back a transfer batch that found a close building
// (or about to build) hours of its chains, before it wrote anything.
var errCloseBuilding = errors.New("a close is building hours of the batch's chains")

// applyFlows is ApplyFlows' transaction. It returns errCloseBuilding, having written nothing, when
// it must wait for a close: the wait comes before every write.
func (s *Store) applyFlows(ctx context.Context, tx pgx.Tx, fs []app.Flow, chains, ids []string) error {
	if _, err := tx.Exec(ctx, sqlLockShared); err != nil {
		return err
	}
	// Each statement below sees what the chains' other writers committed before the lock.
	if _, err := tx.Exec(ctx, sqlFlowsChainLock, chains); err != nil {
		return err
	}
	marks, err := readMarks(ctx, tx)
	if err != nil {
		return err
	}
	seen, err := seenIDs(ctx, tx, chains, ids)
	if err != nil {
		return err
	}
	first, rest := splitFirst(fs, seen)
	if len(rest) > 0 || closingAny(marks, fs) {
		// A close is building hours of this batch's copies (or may: settling moves other
		// copies of its ids, in hours not known here): hold it off until the commit, or wait
		// for it; then see which hours it closed.
		var granted bool
		if err := tx.QueryRow(ctx, sqlFlowsCloseTry, chains).Scan(&granted); err != nil {
			return err
		}
		if !granted {
			return errCloseBuilding
		}
		if marks, err = readMarks(ctx, tx); err != nil {
			return err
		}
	}
	if err := s.moveHeads(ctx, tx, marks, newestHours(fs)); err != nil {
		return err
	}
	if err := countFirst(ctx, tx, first, marks); err != nil {
		return err
	}
	if len(rest) == 0 {
		return nil
	}
	rc, rids, cols := flowColumns(rest)
	if _, err := tx.Exec(ctx, sqlFlowsInsert, cols...); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, sqlFlowsSettleBatch, rc, rids)
	return err
}

type flowKey struct{ chain, id string }

// closingAny is whether a copy of fs is in hours a close has announced and not built yet.
func closingAny(marks flowMarks, fs []app.Flow) bool {
	for i := range fs {
		if marks.closing(fs[i].Chain, fs[i].Time.UTC().Truncate(time.Hour)) {
			return true
		}
	}
	return false
}

// newestHours is the hour of the newest transfer of each chain of fs.
func newestHours(fs []app.Flow) map[string]time.Time {
	out := map[string]time.Time{}
	for i := range fs {
		if h := fs[i].Time.UTC().Truncate(time.Hour); h.After(out[fs[i].Chain]) {
			out[fs[i].Chain] = h
		}
	}
	return out
}

// seenIDs returns the batch's natural ids of which a copy is stored.
func seenIDs(ctx context.Context, tx pgx.Tx, chains, ids []string) (map[flowKey]bool, error) {
	rows, err := tx.Query(ctx, sqlFlowsSeen, chains, ids)
	if err != nil {
		return nil, err
	}
	seen := map[flowKey]bool{}
	var k flowKey
	_, err = pgx.ForEachRow(rows, []any{&k.chain, &k.id}, func() error {
		seen[k] = true
		return nil
	})
	return seen, err
}

// splitFirst separates the transfers whose id has no stored copy and occurs once in the batch
// (the only copy of its id: it counts unless its block is orphaned) from the others, whose
// copies flows_settle weighs against each other.
func splitFirst(fs []app.Flow, stored map[flowKey]bool) (first, rest []app.Flow) {
	if len(stored) == len(fs) {
		return nil, fs
	}
	seen := make(map[flowKey]int, len(fs))
	for _, f := range fs {
		seen[flowKey{f.Chain, f.ID}]++
	}
	for _, f := range fs {
		if k := (flowKey{f.Chain, f.ID}); !stored[k] && seen[k] == 1 {
			first = append(first, f)
		} else {
			rest = append(rest, f)
		}
	}
	return first, rest
}

// FlowHorizon is the start of the first UTC day whose flows are kept (zero without retention).
func (s *Store) FlowHorizon() time.Time {
	if s.retention <= 0 {
		return time.Time{}
	}
	return s.now().UTC().Add(-s.retention).Truncate(day)
}

// PruneCounts are the rows PruneFlows deleted.
type PruneCounts struct {
	Copies, AddressHours, Hours, Days int64
}

// pruneBatch bounds the rows one pruning transaction deletes from each table.
const pruneBatch = 10000

// PruneFlows deletes what is older than the flow horizon: the transfer copies of natural ids
// whose every copy is, and rollup rows of earlier hours and days, in transactions of at most
// pruneBatch rows per table. It holds the transfer writers' shared lock, so no class change or
// reorg (which rewrite past rollup rows) runs meanwhile; transfer writers do (they write no row
// before the horizon). Without retention it does nothing.
func (s *Store) PruneFlows(ctx context.Context) (PruneCounts, error) {
	var total PruneCounts
	h := s.FlowHorizon()
	if h.IsZero() {
		return total, nil
	}
	for {
		var c PruneCounts
		err := s.write(ctx, "prune flows", func(tx pgx.Tx) (bool, error) {
			if _, err := tx.Exec(ctx, sqlLockShared); err != nil {
				return false, err
			}
			if err := tx.QueryRow(ctx, sqlPruneFlows, h, pruneBatch).Scan(&c.Copies); err != nil {
				return false, err
			}
			return false, tx.QueryRow(ctx, sqlPruneRollups, h, pruneBatch).Scan(&c.AddressHours, &c.Hours, &c.Days)
		})
		if err != nil {
			return total, err
		}
		total = PruneCounts{total.Copies + c.Copies, total.AddressHours + c.AddressHours, total.Hours + c.Hours, total.Days + c.Days}
		if c.Copies < pruneBatch && c.AddressHours < pruneBatch && c.Hours < pruneBatch && c.Days < pruneBatch {
			break
		}
	}
	// A chain idle since before the horizon has nothing left to close there.
	return total, s.write(ctx, "prune flow marks", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, sqlLockShared); err != nil {
			return false, err
		}
		_, err := tx.Exec(ctx, sqlFlowMarksPrune, h)
		return false, err
	})
}

// flowColumns are the arguments of sqlFlowsInsert (parallel arrays, one element per transfer)
// and, of them, the chains and natural ids.
func flowColumns(fs []app.Flow) (chains, ids []string, cols []any) {
	n := len(fs)
	chains, ids = make([]string, n), make([]string, n)
	types, blocks := make([]string, n), make([]string, n)
	hours, times := make([]time.Time, n), make([]time.Time, n)
	tokens, froms, tos := make([]string, n), make([]string, n), make([]string, n)
	values, usds := make([]float64, n), make([]float64, n)
	for i, f := range fs {
		chains[i], ids[i], types[i], blocks[i] = f.Chain, f.ID, f.ChainType, f.BlockHash
		hours[i], times[i] = f.Time.UTC().Truncate(time.Hour), f.Time.UTC()
		tokens[i], froms[i], tos[i] = f.Token, f.From, f.To
		values[i], usds[i] = f.Value, f.USD
	}
	return chains, ids, []any{chains, ids, types, blocks, hours, tokens, froms, tos, values, usds, times}
}

// ApplyReorg records which blocks are orphaned and which are canonical again, then re-decides
// which copy counts of every natural id with a copy in those blocks: an orphaned copy leaves the
// rollups and another copy of its id in a block not orphaned, stored before or after the reorg,
// takes its place.
func (s *Store) ApplyReorg(ctx context.Context, chain string, orphaned, canonical []string) error {
	if len(orphaned) == 0 && len(canonical) == 0 {
		return nil
	}
	return s.write(ctx, "apply reorg", func(tx pgx.Tx) (bool, error) {
		// After the writers' lock, as transfer writers take the two: a close building the
		// chain's hours reads which copies count, so the reorg waits for it.
		if _, err := tx.Exec(ctx, sqlLockExclusive); err != nil {
			return false, err
		}
		if _, err := tx.Exec(ctx, sqlFlowsCloseShared, []string{chain}); err != nil {
			return false, err
		}
		if len(canonical) > 0 {
			if _, err := tx.Exec(ctx, sqlOrphansRemove, chain, canonical); err != nil {
				return false, err
			}
		}
		if len(orphaned) > 0 {
			if _, err := tx.Exec(ctx, sqlOrphansAdd, chain, orphaned); err != nil {
				return false, err
			}
		}
		blocks := append(slices.Clip(orphaned), canonical...)
		_, err := tx.Exec(ctx, sqlFlowsSettleBlock, chain, blocks)
		return false, err
	})
}

// ApplyClasses records address class changes (the newest per address wins; an attribution
// older than the stored one is ignored) and the entity types they carry, and re-classifies the
// rollups' past CEX/DEX flows of every address whose class changed: the changed addresses, and
// the attributed and deposit addresses of every entity whose type changed.
func (s *Store) ApplyClasses(ctx context.Context, cs []app.ClassChange) error {
	if len(cs) == 0 {
		return nil
	}
	ents, entResets := entityTypes(cs)
	last, resets := lastPerAddress(cs)
	args, err := classArgs(last)
	if err != nil {
		return err
	}
	return s.write(ctx, "apply address classes", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, sqlLockExclusive); err != nil {
			return false, err
		}
		changed := []string{}
		if len(ents) > 0 {
			ids, types, versions := make([]string, len(ents)), make([]string, len(ents)), make([]int64, len(ents))
			for i, e := range ents {
				ids[i], types[i], versions[i] = e.ID, e.Type, e.Version
			}
			rows, err := tx.Query(ctx, sqlEntityTypesApply, ids, types, versions, entResets)
			if err != nil {
				return false, err
			}
			if changed, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return false, err
			}
		}
		_, err := tx.Exec(ctx, sqlClassesApply, append(args, changed, resets)...)
		return false, err
	})
}

// ClassifyDepositAddresses classifies again the deposit addresses and the attributed addresses
// whose entity's stored type is not the one they were classified by (after the migration that
// brought deposit services, all deposit addresses; after a roll, what replicas of the previous
// release classified by an attribution's own entity type), moving their past flows as a relabel
// does. It changes nothing when none is.
func (s *Store) ClassifyDepositAddresses(ctx context.Context) error {
	// Asked first without the writers' lock, which every start would otherwise take alone
	// while nothing is stale (the usual case); asked again under it.
	rows, err := s.pool.Query(ctx, sqlDepositsStale)
	if err != nil {
		return err
	}
	if stale, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(stale) == 0 {
		return err
	}
	args, err := classArgs(nil)
	if err != nil {
		return err
	}
	return s.write(ctx, "classify deposit addresses", func(tx pgx.Tx) (bool, error) {
		if _, err := tx.Exec(ctx, sqlLockExclusive); err != nil {
			return false, err
		}
		rows, err := tx.Query(ctx, sqlDepositsStale)
		if err != nil {
			return false, err
		}
		stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(stale) == 0 {
			return false, err
		}
		_, err = tx.Exec(ctx, sqlClassesApply, append(args, stale, []bool{})...)
		return false, err
	})
}

// classArgs are sqlClassesApply's arguments $1-$8 for cs (one change per address); $9 and
// $10 (resets, from lastPerAddress) are the caller's.
func classArgs(cs []app.ClassChange) ([]any, error) {
	n := len(cs)
	types, addrs, ents := make([]string, n), make([]string, n), make([]*string, n)
	sets, pools := make([]bool, n), make([]bool, n)
	versions := make([]int64, n)
	infos := make([][]byte, n)
	deposits := make([]string, n)
	for i, c := range cs {
		types[i], addrs[i], sets[i], pools[i], versions[i] = c.ChainType, c.Address, c.SetsEntity, c.IsPool, c.Version
		deposits[i] = c.DepositService
		if c.EntityType != "" {
			ents[i] = &c.EntityType
		}
		if c.Info != nil {
			b, err := json.Marshal(c.Info)
			if err != nil {
				return nil, fmt.Errorf("encode attribution: %w", err)
			}
			infos[i] = b
		}
	}
	return []any{types, addrs, ents, sets, pools, versions, infos, deposits}, nil
}

// entityTypes merges the entity records of cs into one per id, in id order, as applying them in
// turn would leave it (mergeVersions; a record of version 0 then an older one than the stored in
// one batch leaves the older one's type, as in two batches).
func entityTypes(cs []app.ClassChange) (out []app.EntityType, resets []bool) {
	var all []app.EntityType
	for _, c := range cs {
		all = append(all, c.Entities...)
	}
	return mergeVersions(all, func(e app.EntityType) string { return e.ID },
		func(e app.EntityType) (int64, bool) { return e.Version, true })
}

// lastPerAddress merges the changes of one address into one, in (chain type, address) order, as
// applying them in turn would leave it: the attribution that mergeVersions keeps (an untag is an
// attribution of version 0, which applies whatever is stored; an untag then an older attribution
// in one batch leaves the older one, as in two batches), and the pool flag of any.
func lastPerAddress(cs []app.ClassChange) (out []app.ClassChange, resets []bool) {
	// the separator sorts below every character of either part, so the keys' order is the pairs'
	key := func(c app.ClassChange) string { return c.ChainType + "\x00" + c.Address }
	pools := map[string]bool{}
	for _, c := range cs {
		pools[key(c)] = pools[key(c)] || c.IsPool
	}
	out, resets = mergeVersions(cs, key, func(c app.ClassChange) (int64, bool) { return c.Version, c.SetsEntity })
	for i := range out {
		out[i].IsPool = pools[key(out[i])]
	}
	return out, resets
}

// mergeVersions merges a batch's versioned records per key, in key order, into the one that
// applying them in turn would leave: the highest version since the key's last record of version
// 0 (which applies whatever is stored; of equal versions the last). A record that sets nothing
// (sets false: an address's pool flag alone) never replaces one, and stands only when its key has
// no other. resets[i] says a record of version 0 came before out[i]: out[i] then applies whatever
// version is stored, as it would after that record.
func mergeVersions[T any](recs []T, key func(T) string, version func(T) (v int64, sets bool)) (out []T, resets []bool) {
	type merged struct {
		rec   T
		reset bool
	}
	by := map[string]*merged{}
	for _, r := range recs {
		k := key(r)
		o, ok := by[k]
		if !ok {
			by[k] = &merged{rec: r}
			continue
		}
		v, sets := version(r)
		ov, osets := version(o.rec)
		if sets && (!osets || v >= ov || v == 0) {
			o.reset = o.reset || (osets && ov == 0)
			o.rec = r
		}
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out, resets = append(out, by[k].rec), append(resets, by[k].reset)
	}
	return out, resets
}

// AddReserveBalances records exact balance observations of non-circulating addresses.
func (s *Store) AddReserveBalances(ctx context.Context, bs []app.ReserveBalance) error {
	if len(bs) == 0 {
		return nil
	}
	n := len(bs)
	chains, addrs, toks, hashes, bals := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	nums := make([]int64, n)
	for i, b := range bs {
		chains[i], addrs[i], toks[i], hashes[i], bals[i] = b.Chain, b.Address, b.Token, b.BlockHash, b.Balance
		nums[i] = int64(b.BlockNumber)
	}
	if _, err := s.pool.Exec(ctx, sqlReserveUpsert, chains, addrs, toks, nums, hashes, bals); err != nil {
		return fmt.Errorf("add reserve balances: %w", err)
	}
	return nil
}

// ReserveSum is the sum (base 10, smallest unit) of the newest balances of addresses of a token.
func (s *Store) ReserveSum(ctx context.Context, chain, token string, addresses []string) (string, error) {
	var sum string
	if err := s.pool.QueryRow(ctx, sqlReserveSum, chain, token, addresses).Scan(&sum); err != nil {
		return "", fmt.Errorf("sum reserve balances: %w", err)
	}
	return sum, nil
}
