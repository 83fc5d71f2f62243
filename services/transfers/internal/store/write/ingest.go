package write

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/chainintel/chainintel/services/transfers/internal/store/records"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/chainintel/chainintel/libs/pgstore"
)

func num(b *big.Int) pgtype.Numeric {
	if b == nil {
		b = new(big.Int)
	}
	return pgtype.Numeric{Int: b, Exp: 0, Valid: true}
}

var transferCols = []string{"chain", "id", "tx_hash", "block_hash", "block_number", "block_time", "tx_index", "log_index",
	"from_addr", "to_addr", "token", "token_id", "token_name", "token_symbol", "token_decimals", "amount", "unit_value",
	"usd", "type", "from_is_contract", "to_is_contract"}

func transferValues(r records.TransferRow) []any {
	return []any{r.Chain, r.ID, r.TxHash, r.BlockHash, r.BlockNumber, r.BlockTime, r.TxIndex, r.LogIndex,
		r.From, r.To, r.Token, r.TokenID, r.TokenName, r.TokenSymbol, r.TokenDecimals, num(r.Amount), r.UnitValue,
		r.USD, r.Type, r.FromIsContract, r.ToIsContract}
}

// TransferUID is the natural id of a transfer: a 128-bit hash of (tx hash, chain, id, block
// hash), which is unique with the block time. The block hash is part of it because a transfer
// re-mined in a replacement block is a different row until the reorg removes the orphaned one.
// transfers.transfer_uid computes the same in SQL.
func TransferUID(txHash, chain, id, blockHash string) [16]byte {
	b := make([]byte, 0, 16+len(txHash)+len(chain)+len(id)+len(blockHash))
	for i, f := range []string{txHash, chain, id, blockHash} {
		if i > 0 {
			b = append(b, '|')
		}
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
	}
	h := sha256.Sum256(b)
	var u [16]byte
	copy(u[:], h[:16])
	return u
}

func transferRowValues(r records.TransferRow, uid [16]byte) []any {
	return append(transferValues(r), pgtype.UUID{Bytes: uid, Valid: true})
}

var transferColsUID = append(append([]string(nil), transferCols...), "uid")

// Every writer inserts the blocks of its rows in key order (chain, number, hash): the
// transactions, transfers and swaps consumers record the same new blocks at the same time, and
// inserts of one unique key in different orders deadlock (TestConcurrentWritersOfTheSameBlocks).

// groupLock serialises writers of chain rows and rollup applies (shared) with relabels and
// reorgs (exclusive). A relabel re-aggregates from rows that every apply added under the
// membership it replaces (rows still queued are applied after it, under the new one).
// A reorg must not pass a write of its own blocks: a write that started first would not see
// the blocks marked orphaned, and the reorg would not see its uncommitted rows, so they would
// stay (TestReorgBesideAWriteOfItsBlock). Holding it exclusively, the reorg waits for writes in
// flight and removes their rows; writes after it see the mark and drop them. The statements that
// take it (lock_shared.sql, lock_exclusive.sql and the prepare_*.sql) write its number out
// (TestStatementsTakeGroupLock).
const groupLock = 7283400111

// membCache holds the live groups of addresses the writer has seen, valid for one group epoch.
type membCache struct {
	mu    sync.Mutex
	epoch int64
	m     map[string][]string
}

// membCacheMax bounds the cache; past it, it starts over.
const membCacheMax = 2 << 20

// groupsOf returns the live groups of addrs, from the cache or the read model, in tx (which
// holds the group lock, so the epoch it reads holds until it commits).
func (s *Writer) groupsOf(ctx context.Context, tx pgx.Tx, addrs map[string][]string) error {
	var epoch int64
	if err := tx.QueryRow(ctx, groupEpochSQL).Scan(&epoch); err != nil {
		return fmt.Errorf("group epoch: %w", err)
	}
	var missing []string
	s.memb.mu.Lock()
	if s.memb.m == nil || s.memb.epoch != epoch || len(s.memb.m) > membCacheMax {
		s.memb.m, s.memb.epoch = map[string][]string{}, epoch
	}
	for a := range addrs {
		if g, ok := s.memb.m[a]; ok {
			addrs[a] = g
		} else {
			missing = append(missing, a)
		}
	}
	s.memb.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, liveGroupsOfAddressesSQL, missing)
	if err != nil {
		return fmt.Errorf("groups of addresses: %w", err)
	}
	found := map[string][]string{}
	for rows.Next() {
		var a string
		var g []string
		if err := rows.Scan(&a, &g); err != nil {
			rows.Close()
			return fmt.Errorf("groups of addresses: %w", err)
		}
		found[a] = g
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("groups of addresses: %w", err)
	}
	s.memb.mu.Lock()
	defer s.memb.mu.Unlock()
	for _, a := range missing {
		g := found[a]
		if g == nil {
			g = []string{}
		}
		addrs[a] = g
		if s.memb.epoch == epoch {
			s.memb.m[a] = g
		}
	}
	return nil
}

// WriteTransfers stores rows that are not stored yet and whose natural id is free, claims their
// ids and queues exactly those rows for the rollups, in one transaction; rows of orphaned blocks
// and rows whose id another block's row holds are set aside (naturalids.go). It returns how
// many rows were new, so a redelivered batch, or the same transfers in other blocks, returns 0
// and changes nothing. With inline rollups (the default) it applies the queue before it
// returns; with queued rollups the rollup worker does (rollupqueue.go).
//
// A batch is COPYed straight into transfer_ids, transfers and the queue. If it holds a claimed
// id (transfer_ids' primary key refuses the COPY: a stored row, or its transfer in another
// block), two rows of one id, or a row of an orphaned block, the COPY is rolled back and the
// batch goes through a staging table instead, whose insert skips stored rows and parks the
// others.
func (s *Writer) WriteTransfers(ctx context.Context, rows []records.TransferRow) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	times := make([]time.Time, len(rows))
	for i, r := range rows {
		times[i] = r.BlockTime
	}
	for _, table := range []string{"transfers", "pair_hourly", "addr_daily"} {
		if err := s.ensurePartitions(ctx, table, times); err != nil {
			return 0, err
		}
	}
	// Drop repeats within the batch: the natural key makes the insert skip stored rows, and
	// this leaves one row per key for it.
	uids, nids := make([][16]byte, 0, len(rows)), make([][16]byte, 0, len(rows))
	keep := make([]int, 0, len(rows))
	seen := make(map[[16]byte]struct{}, len(rows))
	seenID := make(map[[16]byte]struct{}, len(rows))
	sameID := false // two rows of one natural id in other blocks: only the staged insert picks one
	chainsOf, hashes := []string{}, []string{}
	blockSeen := map[[2]string]bool{}
	for i, r := range rows {
		u := TransferUID(r.TxHash, r.Chain, r.ID, r.BlockHash)
		if _, dup := seen[u]; dup {
			continue
		}
		seen[u] = struct{}{}
		nid := NaturalID(r.TxHash, r.Chain, r.ID)
		if _, dup := seenID[nid]; dup {
			sameID = true
		}
		seenID[nid] = struct{}{}
		uids, nids = append(uids, u), append(nids, nid)
		keep = append(keep, i)
		if k := [2]string{r.Chain, r.BlockHash}; !blockSeen[k] {
			blockSeen[k] = true
			chainsOf, hashes = append(chainsOf, r.Chain), append(hashes, r.BlockHash)
		}
	}
	row := func(i int) ([]any, error) { return transferRowValues(rows[keep[i]], uids[i]), nil }
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockSharedSQL); err != nil {
			return fmt.Errorf("prepare batch: %w", err)
		}
		// The orphan marks cannot move while the shared lock is held (reorgs hold it
		// exclusively).
		var orphans bool
		if err := tx.QueryRow(ctx, batchHasOrphanedBlocksSQL, chainsOf, hashes).Scan(&orphans); err != nil {
			return fmt.Errorf("orphaned blocks of the batch: %w", err)
		}
		if !orphans && !sameID {
			ok, err := copyNewTransfers(ctx, tx, nids, row)
			if err != nil {
				return err
			}
			if ok {
				n = len(keep)
				return nil
			}
		}
		if _, err := tx.Exec(ctx, createStageNewTransfersSQL); err != nil {
			return fmt.Errorf("prepare batch: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage_new_transfers"}, transferColsUID, pgx.CopyFromSlice(len(keep), row)); err != nil {
			return fmt.Errorf("copy transfers: %w", err)
		}
		return tx.QueryRow(ctx, insertStagedTransfersSQL).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("write %d transfers: %w", len(rows), err)
	}
	if err := s.afterWrite(ctx, n); err != nil {
		return n, err
	}
	return n, nil
}

// copyNewTransfers COPYs rows' natural ids (nids) into transfer_ids and the rows (row i's
// values are transferColsUID's) into transfers and the rollup queue, inside a savepoint of tx.
// It reports false, having undone all three, when an id is claimed already.
func copyNewTransfers(ctx context.Context, tx pgx.Tx, nids [][16]byte, row func(int) ([]any, error)) (bool, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	n := len(nids)
	// In key order: two writers claiming some of the same ids (a batch redelivered to another
	// replica) then wait on each other in one order and cannot deadlock.
	sorted := slices.Clone(nids)
	slices.SortFunc(sorted, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	if _, err := sp.CopyFrom(ctx, pgx.Identifier{"transfers", "transfer_ids"}, []string{"nid"}, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
		return []any{pgtype.UUID{Bytes: sorted[i], Valid: true}}, nil
	})); err != nil {
		if pgstore.IsUniqueViolation(err) {
			return false, sp.Rollback(ctx)
		}
		return false, fmt.Errorf("claim natural ids: %w", err)
	}
	vals := make([][]any, n) // each row's values, built once for both COPYs
	if _, err := sp.CopyFrom(ctx, pgx.Identifier{"transfers", "transfers"}, transferColsUID, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
		v, err := row(i)
		vals[i] = v
		return v, err
	})); err != nil {
		if pgstore.IsUniqueViolation(err) {
			return false, sp.Rollback(ctx)
		}
		return false, fmt.Errorf("copy transfers: %w", err)
	}
	if _, err := sp.CopyFrom(ctx, pgx.Identifier{"transfers", "rollup_keys"}, keyColList, pgx.CopyFromSlice(n, func(i int) ([]any, error) {
		return keyValues(vals[i]), nil
	})); err != nil {
		return false, fmt.Errorf("queue transfers for the rollups: %w", err)
	}
	return true, sp.Commit(ctx)
}

// CopyTransfersRaw COPYs rows straight into the transfers table, with no deduplication and no
// rollups. It exists to measure the raw write cost the real path is compared against.
func (s *Writer) CopyTransfersRaw(ctx context.Context, rows []records.TransferRow) error {
	times := make([]time.Time, len(rows))
	for i, r := range rows {
		times[i] = r.BlockTime
	}
	if err := s.ensurePartitions(ctx, "transfers", times); err != nil {
		return err
	}
	_, err := s.pool.CopyFrom(ctx, pgx.Identifier{"transfers", "transfers"}, transferColsUID, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
		r := rows[i]
		return transferRowValues(r, TransferUID(r.TxHash, r.Chain, r.ID, r.BlockHash)), nil
	}))
	return err
}

var transactionCols = []string{"chain", "hash", "block_hash", "block_number", "block_time", "tx_index", "from_addr", "to_addr",
	"contract_created", "nonce", "success", "value", "value_usd", "gas_used", "gas_price", "effective_gas_price", "fee",
	"fee_usd", "method_id"}

// WriteTransactions stores transactions that are not stored yet and whose hash no other block's
// transaction holds (those are parked, naturalids.go); it returns how many were new.
func (s *Writer) WriteTransactions(ctx context.Context, rows []records.TransactionRow) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	times := make([]time.Time, len(rows))
	for i, r := range rows {
		times[i] = r.BlockTime
	}
	if err := s.ensurePartitions(ctx, "transactions", times); err != nil {
		return 0, err
	}
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, prepareTransactionsWriteSQL); err != nil {
			return fmt.Errorf("stage table: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage_transactions"}, transactionCols, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.Chain, r.Hash, r.BlockHash, r.BlockNumber, r.BlockTime, r.TxIndex, r.From, r.To, r.ContractCreated,
				r.Nonce, r.Success, num(r.Value), r.ValueUSD, r.GasUsed, num(r.GasPrice), num(r.EffectiveGasPrice), num(r.Fee),
				r.FeeUSD, r.MethodID}, nil
		})); err != nil {
			return fmt.Errorf("copy transactions: %w", err)
		}
		return tx.QueryRow(ctx, insertStagedTransactionsSQL).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("write %d transactions: %w", len(rows), err)
	}
	return n, nil
}

var swapCols = []string{"chain", "id", "tx_hash", "block_hash", "block_number", "block_time", "log_index", "contract_addr",
	"sender", "receiver", "token0", "token0_id", "token0_name", "token0_symbol", "token0_decimals", "amount0",
	"token1", "token1_id", "token1_name", "token1_symbol", "token1_decimals", "amount1", "usd", "valid", "protocol"}

// WriteSwaps stores swaps that are not stored yet and whose id no other block's swap holds
// (those are parked, naturalids.go); it returns how many were new.
func (s *Writer) WriteSwaps(ctx context.Context, rows []records.SwapRow) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	times := make([]time.Time, len(rows))
	for i, r := range rows {
		times[i] = r.BlockTime
	}
	if err := s.ensurePartitions(ctx, "swaps", times); err != nil {
		return 0, err
	}
	var n int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, prepareSwapsWriteSQL); err != nil {
			return fmt.Errorf("stage table: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"stage_swaps"}, swapCols, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.Chain, r.ID, r.TxHash, r.BlockHash, r.BlockNumber, r.BlockTime, r.LogIndex, r.Contract,
				r.Sender, r.Receiver, r.Token0, r.Token0ID, r.Token0Name, r.Token0Symbol, r.Token0Decimals, num(r.Amount0),
				r.Token1, r.Token1ID, r.Token1Name, r.Token1Symbol, r.Token1Decimals, num(r.Amount1), r.USD, r.Valid, r.Protocol}, nil
		})); err != nil {
			return fmt.Errorf("copy swaps: %w", err)
		}
		return tx.QueryRow(ctx, insertStagedSwapsSQL).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("write %d swaps: %w", len(rows), err)
	}
	return n, nil
}

// ReorgResult counts what a reorg removed, and what it took back (rows of blocks it names
// canonical that an earlier reorg had orphaned).
type ReorgResult struct {
	Transactions, Transfers, Swaps                         int
	RestoredTransactions, RestoredTransfers, RestoredSwaps int
}

// ParkedRetention is how long, in chain time behind the chain's newest stored block, rows of
// orphaned blocks are kept set aside in case a reorg names their block canonical again.
const ParkedRetention = 48 * time.Hour

// RemoveBlocks applies a reorg of a chain, in one transaction, after the writes in flight
// (groupLock). Blocks of canonical that an earlier reorg orphaned are no longer. Every
// transaction, transfer and swap of the orphaned blocks is removed, their natural ids are
// freed, and the removed transfers are subtracted from every rollup (the live groups' too, with
// the membership they were counted under). Then the parked rows the reorg makes canonical are
// written, with their rollups: those of the blocks taken back (rows that arrived while their
// block was orphaned), and those of the freed ids whose block is not orphaned (the same
// transfer in its new block, which arrived before the reorg). The blocks are remembered as
// orphaned so that their rows arriving later are set aside. Running it again changes nothing
// more, so a redelivered reorg changes nothing.
func (s *Writer) RemoveBlocks(ctx context.Context, chain string, blocks, canonical []Block) (ReorgResult, error) {
	var res ReorgResult
	if len(blocks) == 0 && len(canonical) == 0 {
		return res, nil
	}
	canon := make([]string, len(canonical))
	for i, b := range canonical {
		canon[i] = b.Hash
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockExclusiveSQL); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, unorphanBlocksSQL, chain, canon)
		if err != nil {
			return fmt.Errorf("blocks canonical again: %w", err)
		}
		back, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("blocks canonical again: %w", err)
		}
		for _, n := range []naturalTable{transfersNatural, transactionsNatural, swapsNatural} {
			if _, err := tx.Exec(ctx, n.prepare); err != nil {
				return fmt.Errorf("prepare reorg: %w", err)
			}
		}
		if len(blocks) > 0 {
			if err := s.removeBlocks(ctx, tx, chain, blocks, &res); err != nil {
				return err
			}
		}
		for _, p := range []struct {
			n       naturalTable
			removed int
			out     *int
		}{{transfersNatural, res.Transfers, &res.RestoredTransfers}, {transactionsNatural, res.Transactions, &res.RestoredTransactions},
			{swapsNatural, res.Swaps, &res.RestoredSwaps}} {
			if len(back) == 0 && p.removed == 0 {
				continue
			}
			if *p.out, err = p.n.promote(ctx, tx, chain, back); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ReorgResult{}, fmt.Errorf("reorg of %d %s blocks: %w", len(blocks), chain, err)
	}
	if err := s.afterWrite(ctx, res.RestoredTransfers); err != nil {
		return res, err
	}
	return res, nil
}

// removeBlocks removes the rows of chain's orphaned blocks in tx, which holds groupLock
// exclusively: it marks the blocks orphaned, frees the rows' natural ids (remembered in the
// freed tables for promote), subtracts the transfers from every rollup and counts what it
// removed in res.
func (s *Writer) removeBlocks(ctx context.Context, tx pgx.Tx, chain string, blocks []Block, res *ReorgResult) error {
	hashes := make([]string, len(blocks))
	numbers := make([]int64, 0, len(blocks))
	for i, b := range blocks {
		hashes[i] = b.Hash
		if b.Number > 0 {
			numbers = append(numbers, b.Number)
		}
	}
	// Rows of these blocks still queued are not in the rollups yet: applied first, every row
	// the reorg removes is in them, and its subtraction is exact. Their blocks are recorded
	// too, so the reorg finds the blocks' times.
	if err := s.applyBlocks(ctx, tx, chain, blocks); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, orphanBlocksSQL, chain, hashes); err != nil {
		return fmt.Errorf("record orphaned blocks: %w", err)
	}
	if _, err := tx.Exec(ctx, pruneParkedSQL, chain, ParkedRetention); err != nil {
		return fmt.Errorf("prune parked rows: %w", err)
	}
	// The blocks' times, so the deletes prune to their partitions. A block named without
	// its number is looked up by hash alone (a scan of the chain's blocks).
	q, args := blockTimesSQL, []any{chain, hashes, numbers}
	if len(numbers) < len(blocks) {
		q, args = blockTimesByHashSQL, args[:2]
	}
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	times, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	if err != nil {
		return fmt.Errorf("orphaned block times: %w", err)
	}
	if len(times) == 0 {
		return nil // nothing of these blocks was ever stored, or it was removed already
	}
	if err := createSubtractionTables(ctx, tx); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, removeTransfersSQL, chain, hashes, times).Scan(&res.Transfers); err != nil {
		return fmt.Errorf("remove transfers: %w", err)
	}
	if res.Transfers > 0 {
		if err := subtractRemoved(ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.QueryRow(ctx, removeSwapsSQL, chain, hashes, times).Scan(&res.Swaps); err != nil {
		return fmt.Errorf("remove swaps: %w", err)
	}
	if err := tx.QueryRow(ctx, removeTransactionsSQL, chain, hashes, times).Scan(&res.Transactions); err != nil {
		return fmt.Errorf("remove transactions: %w", err)
	}
	_, err = tx.Exec(ctx, deleteBlocksSQL, chain, hashes)
	return err
}

// subtractRemoved subtracts the removed transfers (sub_pairs) from every rollup, in tx.
func subtractRemoved(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, subMembLiveGroupsSQL); err != nil {
		return fmt.Errorf("membership of removed transfers: %w", err)
	}
	if err := analyze(ctx, tx, "sub_pairs", "sub_memb"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, subtractRemovedTransfersSQL); err != nil {
		return fmt.Errorf("subtract removed transfers: %w", err)
	}
	if _, err := tx.Exec(ctx, groupRollupsSQL, signSubtract); err != nil {
		return fmt.Errorf("subtract removed transfers from group rollups: %w", err)
	}
	for _, q := range dropEmptiedRollups {
		if _, err := tx.Exec(ctx, q); err != nil {
			return fmt.Errorf("drop emptied rollups: %w", err)
		}
	}
	return nil
}

// Block names an orphaned block; Number 0 when unknown.
type Block struct {
	Number int64
	Hash   string
}

// createSubtractionTables creates the session's temporary tables rollup subtractions read:
// sub_pairs (pair rows to subtract) and sub_memb (their addresses' groups).
func createSubtractionTables(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, createSubtractionTablesSQL)
	if err != nil {
		return fmt.Errorf("subtraction tables: %w", err)
	}
	return nil
}

// TransferColumns are the transfer columns without the natural id (the row layout before it,
// which the migration tests write).
func TransferColumns() []string { return transferCols }

// TransferValues are a row's values for TransferColumns.
func TransferValues(r records.TransferRow) []any { return transferValues(r) }
