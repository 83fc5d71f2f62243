package store

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Offset identifies a consumed record.
type Offset struct {
	Topic     string
	Partition int
	Offset    int64
}

// TransferFact is what the heuristics keep of one transfer.
type TransferFact struct {
	Offset
	Chain, ChainType string
	BlockHash        string // "" when unknown: never taken back by a reorg
	ID               string // the transfer's id in its chain; "" when unknown (never deduplicated)
	From, To         string
	TimeMs           int64
	USD              float64 // 0 when unpriced
}

// JournalRetention is how long at least (in chain time, behind the newest transfer of a chain)
// the transfers of a block are kept in the journal a reorg subtracts them from (up to pruneStep
// more). Reorgs are a few blocks deep; two days is far beyond any chain's.
var JournalRetention = 48 * time.Hour

// reorgLock serialises transfer batches (shared) with reorgs (exclusive): a batch that started
// before a reorg of its blocks would not see them orphaned, and the reorg would not see its
// uncommitted facts, so they would stay counted.
// Changes of an address's entity take it exclusively too (intel.apply_entity_moves, migration
// 13, which names the same key): a batch counting a pair for the entity its addresses had would
// otherwise commit after the change moved the entity's pairs, and stay counted for it (pairs.go).
const reorgLock = 7283400222

// appliedOffsets returns the highest offset applied per partition of topic.
func appliedOffsets(ctx context.Context, tx pgx.Tx, topic string) (map[int]int64, error) {
	rows, err := tx.Query(ctx, `SELECT partition, applied_offset FROM intel.consumer_offsets WHERE topic = $1 FOR UPDATE`, topic)
	if err != nil {
		return nil, fmt.Errorf("load offsets of %s: %w", topic, err)
	}
	defer rows.Close()
	out := map[int]int64{}
	for rows.Next() {
		var p int
		var o int64
		if err := rows.Scan(&p, &o); err != nil {
			return nil, err
		}
		out[p] = o
	}
	return out, rows.Err()
}

func saveOffsets(ctx context.Context, tx pgx.Tx, topic string, hi map[int]int64) error {
	for _, p := range sortedKeys(hi, cmp.Compare[int]) {
		o := hi[p]
		if _, err := tx.Exec(ctx, `INSERT INTO intel.consumer_offsets (topic, partition, applied_offset) VALUES ($1, $2, $3)
			ON CONFLICT (topic, partition) DO UPDATE SET applied_offset = GREATEST(intel.consumer_offsets.applied_offset, excluded.applied_offset)`, topic, p, o); err != nil {
			return fmt.Errorf("save offsets of %s: %w", topic, err)
		}
	}
	return nil
}

type actKey struct{ ct, addr string }

type act struct {
	usd         float64
	n           int64
	first, last int64
}

// tally sums what transfers add to the edges, the address activity and the pair activity, and
// the settled activity of those no journal holds.
type tally struct {
	edges   map[[3]string]*edgeSum // chain, from, to
	acts    map[actKey]*act
	pairs   map[[3]string]*pairSum // chain type, from, to
	settled map[actKey]*act
}

type edgeSum struct {
	ct          string
	n           int64
	first, last int64
}

func newTally() *tally {
	return &tally{edges: map[[3]string]*edgeSum{}, acts: map[actKey]*act{}, pairs: map[[3]string]*pairSum{}, settled: map[actKey]*act{}}
}

// sortedKeys returns m's keys in cmp's order. Every multi-row write of a batch or a reorg lists
// its rows in key order: two transactions writing rows of the same keys (transfer batches run
// side by side, holding reorgLock shared) then lock them in the same order, and one waits for
// the other where Go's map order could make each hold a row the other waits for, a deadlock
// PostgreSQL resolves by failing one of them.
func sortedKeys[K comparable, V any](m map[K]V, cmp func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp)
	return keys
}

func compareKey3(a, b [3]string) int {
	return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]), strings.Compare(a[2], b[2]))
}

func compareActKey(a, b actKey) int {
	return cmp.Or(strings.Compare(a.ct, b.ct), strings.Compare(a.addr, b.addr))
}

// addAct adds one transfer of (ct, addr) to acts.
func addAct(acts map[actKey]*act, ct, addr string, usd float64, ms int64) {
	k := actKey{ct, addr}
	a := acts[k]
	if a == nil {
		a = &act{first: ms, last: ms}
		acts[k] = a
	}
	a.usd += usd
	a.n++
	a.first, a.last = min(a.first, ms), max(a.last, ms)
}

// addFact counts a transfer of a batch unless its block is orphaned. One without a block hash
// is settled at once: no journal holds it, and a reorg never takes it back.
func (y *tally) addFact(t TransferFact, orphaned bool) {
	if orphaned {
		return
	}
	y.add(t.Chain, t.ChainType, t.From, t.To, t.USD, t.TimeMs)
	if t.BlockHash == "" {
		addAct(y.settled, t.ChainType, t.From, t.USD, t.TimeMs)
		if t.To != t.From {
			addAct(y.settled, t.ChainType, t.To, t.USD, t.TimeMs)
		}
	}
}

// add counts one transfer.
func (y *tally) add(chain, ct, from, to string, usd float64, ms int64) {
	addAct(y.acts, ct, from, usd, ms)
	if to == from {
		return
	}
	addAct(y.acts, ct, to, usd, ms)
	pk := [3]string{ct, from, to}
	if p := y.pairs[pk]; p == nil {
		y.pairs[pk] = &pairSum{usd: usd, n: 1}
	} else {
		p.usd += usd
		p.n++
	}
	k := [3]string{chain, from, to}
	if e := y.edges[k]; e == nil {
		y.edges[k] = &edgeSum{ct: ct, n: 1, first: ms, last: ms}
	} else {
		e.n++
		e.first, e.last = min(e.first, ms), max(e.last, ms)
	}
}

// save adds the tally to intel.edges, intel.address_activity and the pair activity (savePairs).
func (y *tally) save(ctx context.Context, tx pgx.Tx) error {
	if err := y.savePairs(ctx, tx); err != nil {
		return err
	}
	var ch, ct, fr, to []string
	var en, fi, la []int64
	for _, k := range sortedKeys(y.edges, compareKey3) {
		e := y.edges[k]
		ch, ct, fr, to, en, fi, la = append(ch, k[0]), append(ct, e.ct), append(fr, k[1]), append(to, k[2]), append(en, e.n), append(fi, e.first), append(la, e.last)
	}
	if len(ch) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO intel.edges AS e (chain, chain_type, from_addr, to_addr, n, first_ms, last_ms)
				SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])
				ON CONFLICT (chain, from_addr, to_addr) DO UPDATE SET n = e.n + excluded.n,
					first_ms = LEAST(e.first_ms, excluded.first_ms), last_ms = GREATEST(e.last_mS, excluded.last_ms)`,
			ch, ct, fr, to, en, fi, la); err != nil {
			return fmt.Errorf("record transfer edges: %w", err)
		}
	}
	var actCT, actAddr []string
	var usd []float64
	var n, first, last []int64
	for _, k := range sortedKeys(y.acts, compareActKey) {
		a := y.acts[k]
		actCT, actAddr, usd, n, first, last = append(actCT, k.ct), append(actAddr, k.addr), append(usd, a.usd), append(n, a.n), append(first, a.first), append(last, a.last)
	}
	if len(actCT) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO intel.address_activity AS a (chain_type, address, volume_usd, transfer_count, first_ms, last_ms)
				SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::bigint[], $5::bigint[], $6::bigint[])
				ON CONFLICT (chain_type, address) DO UPDATE SET volume_usd = a.volume_usd + excluded.volume_usd,
					transfer_count = a.transfer_count + excluded.transfer_count,
					first_ms = LEAST(a.first_ms, excluded.first_ms), last_ms = GREATEST(a.last_ms, excluded.last_ms)`,
			actCT, actAddr, usd, n, first, last); err != nil {
			return fmt.Errorf("record address activity: %w", err)
		}
	}
	return saveSettled(ctx, tx, y.settled)
}

// ApplyTransfers records the transfers' (from, to) pairs and adds them to the activity of both
// addresses. Records at or below the offset already applied for their partition are skipped, so
// a redelivered batch changes nothing; so are transfers the block journal already holds (the
// same transfer published again, at a new offset, by an ingest that restarted mid-batch).
// A transfer whose natural id (chain, id) is counted in another block is displaced, not
// counted (naturalids.go): a reorg orphaning that block counts it.
// Transfers of orphaned blocks are journaled but not applied: a reorg naming their block
// canonical again applies them.
func (s *Store) ApplyTransfers(ctx context.Context, ts []TransferFact) error {
	if len(ts) == 0 {
		return nil
	}
	return s.inTx(ctx, false, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(`+fmt.Sprint(reorgLock)+`)`); err != nil {
			return err
		}
		done, err := appliedOffsets(ctx, tx, ts[0].Topic)
		if err != nil {
			return err
		}
		blocks, err := blockStates(ctx, tx, ts)
		if err != nil {
			return err
		}
		hi := map[int]int64{}
		journal := blockFacts{prunes: s.prunes}
		var claims []TransferFact // counted if they win their natural id
		sums := newTally()
		for _, t := range ts {
			// Offsets guard only facts the natural ids cannot: a broker whose offsets start again
			// (a recreated topic, the local stack's in-memory broker after a restart) must not
			// make new transfers look applied.
			if o, ok := done[t.Partition]; ok && t.Offset.Offset <= o && (t.ID == "" || t.BlockHash == "") {
				continue
			}
			hi[t.Partition] = max(hi[t.Partition], t.Offset.Offset)
			if t.From == "" || t.To == "" {
				continue
			}
			var orphaned bool
			if t.BlockHash != "" {
				b := blocks[[2]string{t.Chain, t.BlockHash}]
				if t.ID != "" {
					if b.ids[t.ID] {
						continue // journaled already: published again
					}
					b.ids[t.ID] = true
					if !b.orphaned {
						claims = append(claims, t)
						continue
					}
				}
				orphaned = b.orphaned
				journal.add(t, orphaned)
			}
			sums.addFact(t, orphaned)
		}
		if len(hi) == 0 {
			return nil
		}
		won, err := claim(ctx, tx, claims)
		if err != nil {
			return err
		}
		var displaced []TransferFact
		for i, t := range claims {
			if !won[i] {
				displaced = append(displaced, t) // the same transfer is counted in another block
				continue
			}
			journal.add(t, false)
			sums.add(t.Chain, t.ChainType, t.From, t.To, t.USD, t.TimeMs)
		}
		if err := sums.save(ctx, tx); err != nil {
			return err
		}
		if err := journal.save(ctx, tx); err != nil {
			return err
		}
		if err := saveDisplaced(ctx, tx, displaced); err != nil {
			return err
		}
		return saveOffsets(ctx, tx, ts[0].Topic, hi)
	})
}

// blockFacts are the transfers of a batch that a reorg may take back or apply: their ids, what
// each added (sender, recipient, USD, time), with its chain and block, in parallel slices, and
// whether its block is orphaned.
type blockFacts struct {
	chain, hash, chainType, id, from, to []string
	ms                                   []int64
	usd                                  []float64
	orphaned                             []bool
	prunes                               *journalPrunes // nil: prune at every save
}

// pruneStep is how far (in chain time) the journal's cutoff of a chain moves between two prunes
// of it by one Store's transfer batches. Each prune deletes the aged-out blocks and settles their
// transfers (a statement trigger, migration 18), a cost per statement even when it deletes
// nothing; pruning a chain once per minute of its time rather than at every batch spares most
// batches any prune statement, and keeps the journal a minute longer at most.
const pruneStep = time.Minute

// journalPrunes remembers per chain the cutoff of the last prune a Store's batches made.
type journalPrunes struct {
	mu     sync.Mutex
	cutoff map[string]int64
}

// due says whether a batch journaling chain up to cutoff prunes it: the first time, or once the
// cutoff moved pruneStep past the last prune's.
func (p *journalPrunes) due(chain string, cutoff int64) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if last, ok := p.cutoff[chain]; ok && cutoff < last+pruneStep.Milliseconds() {
		return false
	}
	p.cutoff[chain] = cutoff
	return true
}

func (j *blockFacts) add(t TransferFact, orphaned bool) {
	j.chain, j.hash, j.chainType, j.id = append(j.chain, t.Chain), append(j.hash, t.BlockHash), append(j.chainType, t.ChainType), append(j.id, t.ID)
	j.from, j.to, j.ms, j.usd = append(j.from, t.From), append(j.to, t.To), append(j.ms, t.TimeMs), append(j.usd, t.USD)
	j.orphaned = append(j.orphaned, orphaned)
}

// save appends the facts to their blocks' journal rows (one statement for the batch), then
// drops the journal of blocks older than JournalRetention behind the newest block the batch
// journaled, per chain, when a prune of the chain is due (journalPrunes).
func (j *blockFacts) save(ctx context.Context, tx pgx.Tx) error {
	if len(j.chain) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO intel.block_facts AS b (chain, block_hash, chain_type, newest_ms, ids, ms, from_addr, to_addr, usd, orphaned)
		SELECT chain, hash, min(ct), max(ms), array_agg(id ORDER BY i), array_agg(ms ORDER BY i), array_agg(f ORDER BY i),
		       array_agg(t ORDER BY i), array_agg(u ORDER BY i), bool_or(o)
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::float8[], $9::bool[])
		     WITH ORDINALITY x(chain, hash, ct, id, ms, f, t, u, o, i)
		GROUP BY chain, hash ORDER BY chain, hash
		ON CONFLICT (chain, block_hash) DO UPDATE SET newest_ms = GREATEST(b.newest_ms, excluded.newest_ms), ids = b.ids || excluded.ids,
			ms = b.ms || excluded.ms, from_addr = b.from_addr || excluded.from_addr, to_addr = b.to_addr || excluded.to_addr,
			usd = b.usd || excluded.usd`,
		j.chain, j.hash, j.chainType, j.id, j.ms, j.from, j.to, j.usd, j.orphaned); err != nil {
		return fmt.Errorf("journal the batch's blocks: %w", err)
	}
	newest := map[string]int64{}
	for i, c := range j.chain {
		newest[c] = max(newest[c], j.ms[i])
	}
	var chains []string
	var cutoffs []int64
	for _, chain := range sortedKeys(newest, strings.Compare) {
		if cutoff := newest[chain] - JournalRetention.Milliseconds(); j.prunes.due(chain, cutoff) {
			chains, cutoffs = append(chains, chain), append(cutoffs, cutoff)
		}
	}
	if len(chains) == 0 {
		return nil
	}
	// One statement for all chains: the trigger settling the deleted blocks (migration 18) runs
	// once, after every block row is locked, and writes the addresses of all chains in key order.
	// The join alone plans as a scan of the whole journal; the bounds beside it (the chains and
	// the largest cutoff) let the (chain, newest_ms) index find the rows instead.
	top := slices.Max(cutoffs)
	if _, err := tx.Exec(ctx, `DELETE FROM intel.block_facts b USING unnest($1::text[], $2::bigint[]) d(chain, cutoff)
		WHERE b.chain = d.chain AND b.newest_ms < d.cutoff AND b.chain = ANY($1) AND b.newest_ms < $3`, chains, cutoffs, top); err != nil {
		return fmt.Errorf("prune the block journal: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM intel.displaced_facts f USING unnest($1::text[], $2::bigint[]) d(chain, cutoff)
		WHERE f.chain = d.chain AND f.ms < d.cutoff AND f.chain = ANY($1) AND f.ms < $3`, chains, cutoffs, top); err != nil {
		return fmt.Errorf("prune displaced transfers: %w", err)
	}
	return nil
}

// blockState is what a batch needs to know of one of its blocks: whether a reorg orphaned it,
// and the ids of its transfers the journal holds.
type blockState struct {
	orphaned bool
	ids      map[string]bool
}

// blockStates returns the state of ts's blocks, by (chain, block hash).
func blockStates(ctx context.Context, tx pgx.Tx, ts []TransferFact) (map[[2]string]*blockState, error) {
	var chains, hashes []string
	out := map[[2]string]*blockState{}
	for _, t := range ts {
		k := [2]string{t.Chain, t.BlockHash}
		if t.BlockHash != "" && out[k] == nil {
			out[k] = &blockState{ids: map[string]bool{}}
			chains, hashes = append(chains, t.Chain), append(hashes, t.BlockHash)
		}
	}
	if len(hashes) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, `SELECT b.chain, b.hash, o.hash IS NOT NULL, coalesce(f.ids, '{}')
		FROM unnest($1::text[], $2::text[]) b(chain, hash)
		LEFT JOIN intel.orphaned_blocks o ON o.chain = b.chain AND o.hash = b.hash
		LEFT JOIN intel.block_facts f ON f.chain = b.chain AND f.block_hash = b.hash`, chains, hashes)
	if err != nil {
		return nil, fmt.Errorf("state of the batch's blocks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]string
		var orphaned bool
		var ids []string
		if err := rows.Scan(&k[0], &k[1], &orphaned, &ids); err != nil {
			return nil, err
		}
		b := out[k]
		b.orphaned = orphaned
		for _, id := range ids {
			if id != "" {
				b.ids[id] = true
			}
		}
	}
	return out, rows.Err()
}

// ApplyReorg applies a reorg of chain. The transfers of the orphaned blocks are taken back out
// of the edges and the address activity, from the journal, which keeps them marked orphaned,
// and their natural ids are freed; the blocks are remembered so that their transfers arriving
// later are journaled but not applied. Blocks of canonical that an earlier reorg orphaned are
// taken back: their journaled transfers (those applied before and those that arrived while the
// block was orphaned) are applied again, but for those whose natural id another live block's
// transfer holds, which are displaced (restoreBlocks). Then the displaced transfers of the freed ids whose
// block is not orphaned are counted (the same transfers in their new blocks, which arrived
// before the reorg). A redelivered reorg changes nothing.
func (s *Store) ApplyReorg(ctx context.Context, chain string, orphaned, canonical []string) error {
	if len(orphaned) == 0 && len(canonical) == 0 {
		return nil
	}
	return s.inTx(ctx, false, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+fmt.Sprint(reorgLock)+`)`); err != nil {
			return err
		}
		var freed []string
		if len(orphaned) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO intel.orphaned_blocks (chain, hash) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
				chain, orphaned); err != nil {
				return fmt.Errorf("record orphaned blocks: %w", err)
			}
			rows, err := tx.Query(ctx, `UPDATE intel.block_facts SET orphaned = true WHERE chain = $1 AND block_hash = ANY($2) AND NOT orphaned
			RETURNING chain_type, newest_ms, ms, from_addr, to_addr, usd, ids`, chain, orphaned)
			if err != nil {
				return fmt.Errorf("journal of orphaned blocks: %w", err)
			}
			sums, ids, err := journalTally(rows, chain)
			if err != nil {
				return fmt.Errorf("journal of orphaned blocks: %w", err)
			}
			if err := sums.takeBack(ctx, tx); err != nil {
				return err
			}
			if err := freeIDs(ctx, tx, chain, ids); err != nil {
				return err
			}
			freed = ids
		}
		if len(canonical) > 0 {
			if err := restoreBlocks(ctx, tx, chain, canonical); err != nil {
				return err
			}
		}
		return promoteDisplaced(ctx, tx, chain, freed)
	})
}

// journalTally sums what the journal rows (chain_type, newest_ms, ms, from_addr, to_addr, usd,
// ids) of chain's blocks add: what ApplyTransfers added for their transfers. It returns their
// ids too.
func journalTally(rows pgx.Rows, chain string) (*tally, []string, error) {
	defer rows.Close()
	sums := newTally()
	var all []string
	for rows.Next() {
		var ct string
		var newest int64
		var ms []int64
		var from, to, ids []string
		var usd []float64
		if err := rows.Scan(&ct, &newest, &ms, &from, &to, &usd, &ids); err != nil {
			return nil, nil, err
		}
		for i := range from {
			t := newest // journaled before the journal kept times
			if len(ms) == len(from) {
				t = ms[i]
			}
			sums.add(chain, ct, from[i], to[i], usd[i], t)
		}
		all = append(all, ids...)
	}
	return sums, all, rows.Err()
}

// takeBack subtracts the tally's counts and volumes from intel.edges, intel.address_activity
// and the pair activity (takeBackPairs), drops the rows it empties, and recomputes the first and
// last times of the addresses whose extremes it took back (retime). The edges' first and last
// times are not recomputed: nothing reads them but the edges' pruning (PruneEdges).
func (y *tally) takeBack(ctx context.Context, tx pgx.Tx) error {
	if err := y.takeBackPairs(ctx, tx); err != nil {
		return err
	}
	var actCT, actAddr []string
	var usd []float64
	var n []int64
	for _, k := range sortedKeys(y.acts, compareActKey) {
		a := y.acts[k]
		actCT, actAddr, usd, n = append(actCT, k.ct), append(actAddr, k.addr), append(usd, a.usd), append(n, a.n)
	}
	if len(actCT) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE intel.address_activity a SET volume_usd = a.volume_usd - d.usd, transfer_count = a.transfer_count - d.n
			FROM unnest($1::text[], $2::text[], $3::float8[], $4::bigint[]) d(ct, addr, usd, n)
			WHERE a.chain_type = d.ct AND a.address = d.addr`, actCT, actAddr, usd, n); err != nil {
			return fmt.Errorf("take back address activity: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM intel.address_activity a USING unnest($1::text[], $2::text[]) d(ct, addr)
			WHERE a.chain_type = d.ct AND a.address = d.addr AND a.transfer_count <= 0`, actCT, actAddr); err != nil {
			return fmt.Errorf("drop emptied address activity: %w", err)
		}
	}
	if err := y.retime(ctx, tx); err != nil {
		return err
	}
	var ch, fr, to []string
	var en []int64
	for _, k := range sortedKeys(y.edges, compareKey3) {
		ch, fr, to, en = append(ch, k[0]), append(fr, k[1]), append(to, k[2]), append(en, y.edges[k].n)
	}
	if len(ch) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE intel.edges e SET n = e.n - d.n FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) d(c, f, t, n)
			WHERE e.chain = d.c AND e.from_addr = d.f AND e.to_addr = d.t`, ch, fr, to, en); err != nil {
			return fmt.Errorf("take back edges: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM intel.edges e USING unnest($1::text[], $2::text[], $3::text[]) d(c, f, t)
			WHERE e.chain = d.c AND e.from_addr = d.f AND e.to_addr = d.t AND e.n <= 0`, ch, fr, to); err != nil {
			return fmt.Errorf("drop emptied edges: %w", err)
		}
	}
	return nil
}

// restoreBlocks takes back the blocks of canonical that are orphaned: no longer, and their
// journaled transfers (with their own times where the journal has them) claim their natural ids.
// Those that win, and those without an id, are applied; a transfer whose id another live block's
// transfer holds is displaced, as ApplyTransfers displaces it: dropped from its block's journal
// (a later reorg orphaning the block must not take back what it did not count) and set aside, so
// a reorg orphaning the other block counts it.
func restoreBlocks(ctx context.Context, tx pgx.Tx, chain string, canonical []string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM intel.orphaned_blocks WHERE chain = $1 AND hash = ANY($2)`, chain, canonical); err != nil {
		return fmt.Errorf("blocks canonical again: %w", err)
	}
	rows, err := tx.Query(ctx, `UPDATE intel.block_facts SET orphaned = false WHERE chain = $1 AND block_hash = ANY($2) AND orphaned
		RETURNING block_hash, chain_type, newest_ms, ms, from_addr, to_addr, usd, ids`, chain, canonical)
	if err != nil {
		return fmt.Errorf("journal of blocks canonical again: %w", err)
	}
	facts, err := journalFacts(rows, chain)
	if err != nil {
		return fmt.Errorf("journal of blocks canonical again: %w", err)
	}
	var claims []TransferFact
	sums := newTally()
	for _, f := range facts {
		if f.ID == "" {
			sums.add(chain, f.ChainType, f.From, f.To, f.USD, f.TimeMs)
			continue
		}
		claims = append(claims, f)
	}
	won, err := claim(ctx, tx, claims)
	if err != nil {
		return err
	}
	var displaced []TransferFact
	for i, f := range claims {
		if !won[i] {
			displaced = append(displaced, f)
			continue
		}
		sums.add(chain, f.ChainType, f.From, f.To, f.USD, f.TimeMs)
	}
	if err := sums.save(ctx, tx); err != nil {
		return err
	}
	if err := dropFromJournal(ctx, tx, chain, facts, displaced); err != nil {
		return err
	}
	return saveDisplaced(ctx, tx, displaced)
}

// journalFacts reads the journal rows (block_hash, chain_type, newest_ms, ms, from_addr, to_addr,
// usd, ids) of chain's blocks as the transfers they hold, in journal order.
func journalFacts(rows pgx.Rows, chain string) ([]TransferFact, error) {
	defer rows.Close()
	var out []TransferFact
	for rows.Next() {
		var hash, ct string
		var newest int64
		var ms []int64
		var from, to, ids []string
		var usd []float64
		if err := rows.Scan(&hash, &ct, &newest, &ms, &from, &to, &usd, &ids); err != nil {
			return nil, err
		}
		for i := range from {
			f := TransferFact{Chain: chain, ChainType: ct, BlockHash: hash, From: from[i], To: to[i], USD: usd[i], TimeMs: newest}
			if len(ms) == len(from) {
				f.TimeMs = ms[i] // journaled before the journal kept times otherwise
			}
			if len(ids) == len(from) {
				// A row journaled before the journal kept ids has none ('{}', migration 00004):
				// its transfers are applied again without claiming an id, as before ids were kept.
				f.ID = ids[i]
			}
			out = append(out, f)
		}
	}
	return out, rows.Err()
}

// dropFromJournal rewrites the journal rows of the blocks of the displaced facts with the other
// facts of those blocks only.
func dropFromJournal(ctx context.Context, tx pgx.Tx, chain string, facts, displaced []TransferFact) error {
	if len(displaced) == 0 {
		return nil
	}
	gone := map[[2]string]bool{}
	hashes := map[string]bool{}
	for _, d := range displaced {
		gone[[2]string{d.BlockHash, d.ID}], hashes[d.BlockHash] = true, true
	}
	var kept blockFacts
	for _, f := range facts {
		if hashes[f.BlockHash] && !gone[[2]string{f.BlockHash, f.ID}] {
			kept.add(f, false)
		}
	}
	emptied := make([]string, 0, len(hashes))
	for h := range hashes {
		emptied = append(emptied, h)
	}
	if _, err := tx.Exec(ctx, `UPDATE intel.block_facts SET ids = '{}', ms = '{}', from_addr = '{}', to_addr = '{}', usd = '{}'
		WHERE chain = $1 AND block_hash = ANY($2)`, chain, emptied); err != nil {
		return fmt.Errorf("drop displaced transfers from the journal: %w", err)
	}
	return kept.save(ctx, tx)
}

// Contract is a deployed contract. Deployer and DeployTxHash are empty when its creation was
// not seen; CodeKnown says Bytecode, FunctionSighashes and ProxyImplementation were read from
// the chain (chain.contracts.v1), not only the creating transaction.
type Contract struct {
	Chain, ChainType    string
	Address             string
	Deployer            string
	DeployTxHash        string
	BlockTimeMs         int64
	BytecodeSize        int
	CodeKnown           bool
	Bytecode            string
	FunctionSighashes   []string
	ProxyImplementation string
	InternalDeployer    string
}

//go:embed sql/contracts_upsert.sql
var contractsUpsertSQL string

// ApplyContracts records contracts (contracts_upsert.sql says how records of one contract
// merge) and marks the addresses as contracts (a new attribution version when they were not
// marked yet). Idempotent.
func (s *Store) ApplyContracts(ctx context.Context, cs []Contract) error {
	if len(cs) == 0 {
		return nil
	}
	n := len(cs)
	ch, ct, addr, dep, hash := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	code, sels, proxy, idep := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ms, size, known := make([]int64, n), make([]int32, n), make([]bool, n)
	for i, c := range cs {
		ch[i], ct[i], addr[i], dep[i], hash[i] = c.Chain, c.ChainType, c.Address, c.Deployer, c.DeployTxHash
		code[i], sels[i], proxy[i], idep[i] = c.Bytecode, strings.Join(c.FunctionSighashes, ","), c.ProxyImplementation, c.InternalDeployer
		ms[i], size[i], known[i] = c.BlockTimeMs, int32(c.BytecodeSize), c.CodeKnown
	}
	return s.inTx(ctx, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, contractsUpsertSQL, ch, addr, dep, hash, ms, size, known, code, sels, proxy, idep); err != nil {
			return fmt.Errorf("record contracts: %w", err)
		}
		if _, err := tx.Exec(ctx, contractsMarkSQL, ct, addr); err != nil {
			return fmt.Errorf("mark contracts: %w", err)
		}
		return nil
	})
}

//go:embed sql/contracts_mark.sql
var contractsMarkSQL string

//go:embed sql/contracts_unmarked.sql
var contractsUnmarkedSQL string

// ContractAddress is an address a record says holds code, without its deployment.
type ContractAddress struct {
	ChainType, Address string
}

// MarkContracts marks addresses as contracts in the attribution (contract: true) without
// recording a deployment: /intelligence/contract still knows only the contracts whose creation
// or code was seen. Monotonic and idempotent: a marked address stays marked, and a batch whose
// addresses are all marked already reads once and takes no version.
func (s *Store) MarkContracts(ctx context.Context, as []ContractAddress) error {
	if len(as) == 0 {
		return nil
	}
	ct, addr := make([]string, len(as)), make([]string, len(as))
	for i, a := range as {
		ct[i], addr[i] = a.ChainType, a.Address
	}
	rows, err := s.pool.Query(ctx, contractsUnmarkedSQL, ct, addr)
	if err != nil {
		return fmt.Errorf("read contract flags: %w", err)
	}
	ct, addr = ct[:0], addr[:0]
	for rows.Next() {
		var c, a string
		if err := rows.Scan(&c, &a); err != nil {
			rows.Close()
			return fmt.Errorf("read contract flags: %w", err)
		}
		ct, addr = append(ct, c), append(addr, a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read contract flags: %w", err)
	}
	if len(ct) == 0 {
		return nil
	}
	return s.inTx(ctx, true, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, contractsMarkSQL, ct, addr); err != nil {
			return fmt.Errorf("mark contracts: %w", err)
		}
		return nil
	})
}

// ContractInfo is a contract with its token, when it is one.
type ContractInfo struct {
	Contract
	Token *Token
}

// Token is on-chain token metadata, with its pricing id when known.
type Token struct {
	Chain, Address     string
	Name, Symbol       string
	Decimals           int
	PricingID          string
	Deployer, DeployTx string
}

// ContractByAddress returns a contract on chain.
func (s *Store) ContractByAddress(ctx context.Context, chain, addr string) (ContractInfo, error) {
	var c ContractInfo
	var tn, ts, tp *string
	var td *int32
	err := s.pool.QueryRow(ctx, `SELECT c.chain, c.address, c.deployer, c.deploy_tx_hash, c.block_time_ms, c.bytecode_size,
			c.code_known, c.bytecode, c.function_sighashes, c.proxy_implementation, c.internal_deployer,
			t.name, t.symbol, t.decimals, COALESCE(NULLIF(t.pricing_id, ''), (SELECT d.pricing_id FROM intel.token_deployments d WHERE d.chain = c.chain AND d.address = c.address LIMIT 1), '')
		FROM intel.contracts c LEFT JOIN intel.tokens t ON t.chain = c.chain AND t.address = c.address
		WHERE c.chain = $1 AND c.address = $2`, chain, addr).
		Scan(&c.Chain, &c.Address, &c.Deployer, &c.DeployTxHash, &c.BlockTimeMs, &c.BytecodeSize,
			&c.CodeKnown, &c.Bytecode, &c.FunctionSighashes, &c.ProxyImplementation, &c.InternalDeployer, &tn, &ts, &td, &tp)
	if err == pgx.ErrNoRows {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("load contract %s:%s: %w", chain, addr, err)
	}
	if tn != nil {
		c.Token = &Token{Chain: chain, Address: addr, Name: *tn, Symbol: *ts, Decimals: int(*td), PricingID: *tp}
	}
	return c, nil
}

// ApplyTokens upserts on-chain token metadata (chain.tokens.v1). Contract rows come from
// contract creations only (they carry the block time the contract answer needs).
func (s *Store) ApplyTokens(ctx context.Context, ts []Token) error {
	for _, t := range ts {
		if _, err := s.pool.Exec(ctx, `INSERT INTO intel.tokens (chain, address, name, symbol, decimals, pricing_id, deployer, deploy_tx_hash)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (chain, address) DO UPDATE SET name = excluded.name, symbol = excluded.symbol, decimals = excluded.decimals,
				pricing_id = COALESCE(NULLIF(excluded.pricing_id, ''), intel.tokens.pricing_id),
				deployer = COALESCE(NULLIF(excluded.deployer, ''), intel.tokens.deployer),
				deploy_tx_hash = COALESCE(NULLIF(excluded.deploy_tx_hash, ''), intel.tokens.deploy_tx_hash)`,
			t.Chain, t.Address, t.Name, t.Symbol, t.Decimals, t.PricingID, t.Deployer, t.DeployTx); err != nil {
			return fmt.Errorf("upsert token %s:%s: %w", t.Chain, t.Address, err)
		}
	}
	return nil
}

// Balance is a balance observation.
type Balance struct {
	Chain, ChainType string
	Address          string
	TokenAddress     string
	TokenID          string
	Decimals         int
	Balance          *big.Int
	BlockNumber      uint64
}

// ApplyBalances keeps the latest observation per (chain, address, token) of addresses without an
// operator entity (the candidates of predictions). Older observations never replace newer ones.
func (s *Store) ApplyBalances(ctx context.Context, bs []Balance) error {
	if len(bs) == 0 {
		return nil
	}
	var ch, ct, addr, tok, tid, bal []string
	var dec []int32
	var blk []int64
	for _, b := range bs {
		ch, ct, addr, tok, tid = append(ch, b.Chain), append(ct, b.ChainType), append(addr, b.Address), append(tok, b.TokenAddress), append(tid, b.TokenID)
		bal, dec, blk = append(bal, b.Balance.String()), append(dec, int32(b.Decimals)), append(blk, int64(b.BlockNumber))
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO intel.balances AS b (chain, address, token_address, token_id, decimals, balance, block_number)
		SELECT DISTINCT ON (ch, addr, tok) ch, addr, tok, tid, dec, bal::numeric, blk
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::bigint[]) AS u(ch, ct, addr, tok, tid, dec, bal, blk)
		WHERE NOT EXISTS (SELECT 1 FROM intel.addresses a WHERE a.chain_type = u.ct AND a.address = u.addr AND a.entity_id IS NOT NULL)
		ORDER BY ch, addr, tok, blk DESC
		ON CONFLICT (chain, address, token_address) DO UPDATE SET token_id = excluded.token_id, decimals = excluded.decimals,
			balance = excluded.balance, block_number = excluded.block_number
		WHERE excluded.block_number >= b.block_number`, ch, ct, addr, tok, tid, dec, bal, blk)
	if err != nil {
		return fmt.Errorf("record balances: %w", err)
	}
	return nil
}

// MarketToken is a registry entry.
type MarketToken struct {
	PricingID, Name, Symbol string
	Deployments             []Deployment
}

// Deployment is a token's contract on a chain ("" address for a native coin).
type Deployment struct {
	Chain, Address string
	Decimals       int
}

// ApplyMarketTokens replaces registry entries (market.tokens.v1 is compacted: the latest record
// per pricing id is the truth). Deleted is a list of pricing ids whose tombstone arrived.
func (s *Store) ApplyMarketTokens(ctx context.Context, ts []MarketToken, deleted []string) error {
	return s.inTx(ctx, false, func(tx pgx.Tx) error {
		if len(deleted) > 0 {
			if _, err := tx.Exec(ctx, "DELETE FROM intel.market_tokens WHERE pricing_id = ANY($1)", deleted); err != nil {
				return fmt.Errorf("delete market tokens: %w", err)
			}
		}
		for _, t := range ts {
			if _, err := tx.Exec(ctx, `INSERT INTO intel.market_tokens (pricing_id, name, symbol) VALUES ($1, $2, $3)
				ON CONFLICT (pricing_id) DO UPDATE SET name = excluded.name, symbol = excluded.symbol`, t.PricingID, t.Name, t.Symbol); err != nil {
				return fmt.Errorf("upsert market token %s: %w", t.PricingID, err)
			}
			if _, err := tx.Exec(ctx, "DELETE FROM intel.token_deployments WHERE pricing_id = $1", t.PricingID); err != nil {
				return err
			}
			for _, d := range t.Deployments {
				if _, err := tx.Exec(ctx, `INSERT INTO intel.token_deployments (pricing_id, chain, address, decimals) VALUES ($1, $2, $3, $4)
					ON CONFLICT DO NOTHING`, t.PricingID, d.Chain, d.Address, d.Decimals); err != nil {
					return fmt.Errorf("upsert deployment of %s: %w", t.PricingID, err)
				}
			}
		}
		return nil
	})
}

// PricePoint is a USD price at a time.
type PricePoint struct {
	PricingID string
	TimeMs    int64
	Price     float64
}

// ApplyPrices records price points (idempotent) and drops points more than 8 days older than
// the newest of their token.
func (s *Store) ApplyPrices(ctx context.Context, ps []PricePoint) error {
	if len(ps) == 0 {
		return nil
	}
	var id []string
	var ms []int64
	var p []float64
	for _, x := range ps {
		id, ms, p = append(id, x.PricingID), append(ms, x.TimeMs), append(p, x.Price)
	}
	return s.inTx(ctx, false, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO intel.prices (pricing_id, time_ms, price)
			SELECT DISTINCT ON (id, ms) id, ms, p FROM unnest($1::text[], $2::bigint[], $3::float8[]) AS u(id, ms, p)
			ON CONFLICT (pricing_id, time_ms) DO UPDATE SET price = excluded.price`, id, ms, p); err != nil {
			return fmt.Errorf("record prices: %w", err)
		}
		_, err := tx.Exec(ctx, `DELETE FROM intel.prices x USING (SELECT pricing_id, max(time_ms) AS newest FROM intel.prices WHERE pricing_id = ANY($1) GROUP BY pricing_id) m
			WHERE x.pricing_id = m.pricing_id AND x.time_ms < m.newest - 8 * 86400000`, id)
		return err
	})
}

// Quote is a token's latest price and its price 24 hours before that.
type Quote struct {
	Price, Price24hAgo float64
	TimeMs             int64
}

// Quotes returns the quotes of pricing ids that have prices.
func (s *Store) Quotes(ctx context.Context, ids []string) (map[string]Quote, error) {
	rows, err := s.pool.Query(ctx, `SELECT l.pricing_id, l.price, l.time_ms,
			COALESCE((SELECT o.price FROM intel.prices o WHERE o.pricing_id = l.pricing_id AND o.time_ms <= l.time_ms - 86400000 ORDER BY o.time_ms DESC LIMIT 1),
				(SELECT o.price FROM intel.prices o WHERE o.pricing_id = l.pricing_id ORDER BY o.time_ms LIMIT 1))
		FROM (SELECT DISTINCT ON (pricing_id) pricing_id, price, time_ms FROM intel.prices WHERE pricing_id = ANY($1) ORDER BY pricing_id, time_ms DESC) l`, ids)
	if err != nil {
		return nil, fmt.Errorf("load quotes: %w", err)
	}
	defer rows.Close()
	out := map[string]Quote{}
	for rows.Next() {
		var id string
		var q Quote
		if err := rows.Scan(&id, &q.Price, &q.TimeMs, &q.Price24hAgo); err != nil {
			return nil, err
		}
		out[id] = q
	}
	return out, rows.Err()
}

// MarketToken returns a registry entry by pricing id.
func (s *Store) MarketToken(ctx context.Context, id string) (MarketToken, error) {
	var t MarketToken
	err := s.pool.QueryRow(ctx, "SELECT pricing_id, name, symbol FROM intel.market_tokens WHERE pricing_id = $1", id).Scan(&t.PricingID, &t.Name, &t.Symbol)
	if err == pgx.ErrNoRows {
		return t, ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("load market token %s: %w", id, err)
	}
	rows, err := s.pool.Query(ctx, "SELECT chain, address, decimals FROM intel.token_deployments WHERE pricing_id = $1 ORDER BY chain, address", id)
	if err != nil {
		return t, err
	}
	t.Deployments, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Deployment, error) {
		var d Deployment
		err := r.Scan(&d.Chain, &d.Address, &d.Decimals)
		return d, err
	})
	return t, err
}

// PricingIDByDeployment returns the pricing id of the token at (chain, address): from the
// registry, else from on-chain metadata that carried one.
func (s *Store) PricingIDByDeployment(ctx context.Context, chain, addr string) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT pricing_id FROM (
			SELECT pricing_id, 0 AS o FROM intel.token_deployments WHERE chain = $1 AND address = $2
			UNION ALL SELECT pricing_id, 1 FROM intel.tokens WHERE chain = $1 AND address = $2 AND pricing_id <> '') x
		ORDER BY o, pricing_id LIMIT 1`, chain, addr).Scan(&id)
	if err == pgx.ErrNoRows {
		return "", ErrNotFound
	}
	return id, err
}

// TokenByAddress returns on-chain token metadata.
func (s *Store) TokenByAddress(ctx context.Context, chain, addr string) (Token, error) {
	var t Token
	err := s.pool.QueryRow(ctx, `SELECT chain, address, name, symbol, decimals, pricing_id, deployer, deploy_tx_hash FROM intel.tokens WHERE chain = $1 AND address = $2`, chain, addr).
		Scan(&t.Chain, &t.Address, &t.Name, &t.Symbol, &t.Decimals, &t.PricingID, &t.Deployer, &t.DeployTx)
	if err == pgx.ErrNoRows {
		return t, ErrNotFound
	}
	return t, err
}
