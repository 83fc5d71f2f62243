package write

// Natural ids (migration 23, docs/transfers.md "Natural ids"). A transfer or swap is
// `<txHash>_<index>` on its chain and a transaction is its hash on its chain, whatever block
// carries it. The chain tables are partitioned by block time, so their unique indexes cannot
// refuse the same id at another time; transfer_ids, swap_ids and transaction_ids (not
// partitioned, the id's hash as primary key) can. A write claims the ids of its new rows in the
// same transaction as it stores them. A row whose id another block's row holds is parked (in
// parked_<table>, as rows of orphaned blocks are): it replaces that row only when a reorg
// removes it, whichever of the two arrives first; a reorg frees the ids of the rows it removes
// and writes the parked rows of those ids whose block is not orphaned.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// NaturalID is the hash a transfer's or swap's natural id (tx hash, chain, id) is claimed by in
// transfer_ids or swap_ids; a transaction's is NaturalID(hash, chain, ""). It is TransferUID
// with an empty block hash, so SQL computes it with transfers.transfer_uid.
func NaturalID(txHash, chain, id string) [16]byte { return TransferUID(txHash, chain, id, "") }

// naturalTable is a chain table's statements that claim and free natural ids, for a reorg.
type naturalTable struct {
	table string // transfers, swaps or transactions
	// prepare creates the session's staging table of the table's rows and its table of the
	// natural ids a reorg freed (freed_<table>), and empties the latter.
	prepare string
	// stageParked moves the parked rows a reorg makes canonical into the staging table.
	stageParked string
	// insert writes the staged rows whose natural id is free, claims it, and parks the others
	// (insert_staged_<table>.sql).
	insert string
}

var (
	transfersNatural    = naturalTable{"transfers", prepareReorgTransfersSQL, stageParkedTransfersSQL, insertStagedTransfersSQL}
	swapsNatural        = naturalTable{"swaps", prepareReorgSwapsSQL, stageParkedSwapsSQL, insertStagedSwapsSQL}
	transactionsNatural = naturalTable{"transactions", prepareReorgTransactionsSQL, stageParkedTransactionsSQL, insertStagedTransactionsSQL}
)

// promote writes, in a reorg's transaction, the parked rows of chain that the reorg makes
// canonical: those of the blocks it takes back (back) and those of ids it freed whose block is
// not orphaned. Rows that still cannot be written (their id taken again) are parked again.
func (n naturalTable) promote(ctx context.Context, tx pgx.Tx, chain string, back []string) (int, error) {
	if _, err := tx.Exec(ctx, n.stageParked, chain, back); err != nil {
		return 0, fmt.Errorf("stage parked %s: %w", n.table, err)
	}
	var k int
	if err := tx.QueryRow(ctx, n.insert).Scan(&k); err != nil {
		return 0, fmt.Errorf("write parked %s: %w", n.table, err)
	}
	return k, nil
}
