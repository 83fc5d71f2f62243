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
	"strings"

	"github.com/jackc/pgx/v5"
)

// NaturalID is the hash a transfer's or swap's natural id (tx hash, chain, id) is claimed by in
// transfer_ids or swap_ids; a transaction's is NaturalID(hash, chain, ""). It is TransferUID
// with an empty block hash, so SQL computes it with transfers.transfer_uid.
func NaturalID(txHash, chain, id string) [16]byte { return TransferUID(txHash, chain, id, "") }

// naturalTable describes how a chain table's rows claim their natural ids.
type naturalTable struct {
	table string   // transfers, swaps or transactions
	ids   string   // its id table
	stage string   // the session's staging table a write or a reorg fills
	cols  []string // the columns written
	// natural are the natural id's columns; idArgs their arguments of transfers.transfer_uid
	// (with %[1]s for a row's alias).
	natural, idArgs string
	// stored is true when the staged row s is stored already (the same block's row, aliased t).
	stored string
	// ret are the inserted rows' columns the CTEs of after read (from ins).
	ret, after string
}

var (
	transfersNatural = naturalTable{table: "transfers", ids: "transfer_ids", stage: "stage_new_transfers", cols: transferColsUID,
		natural: "tx_hash, chain, id", idArgs: "%[1]s.tx_hash, %[1]s.chain, %[1]s.id, ''",
		stored: `t.block_time = s.block_time AND t.uid = s.uid`,
		ret:    keyCols, after: `q AS (INSERT INTO transfers.rollup_keys (` + keyCols + `) SELECT ` + keyCols + ` FROM ins)`}
	swapsNatural = naturalTable{table: "swaps", ids: "swap_ids", stage: "stage_swaps", cols: swapCols,
		natural: "tx_hash, chain, id", idArgs: "%[1]s.tx_hash, %[1]s.chain, %[1]s.id, ''",
		stored: `t.tx_hash = s.tx_hash AND t.chain = s.chain AND t.id = s.id AND t.block_hash = s.block_hash AND t.block_time = s.block_time`,
		ret:    "chain, block_hash, block_number, block_time", after: blocksCTE}
	transactionsNatural = naturalTable{table: "transactions", ids: "transaction_ids", stage: "stage_transactions", cols: transactionCols,
		natural: "hash, chain", idArgs: "%[1]s.hash, %[1]s.chain, '', ''",
		stored: `t.hash = s.hash AND t.chain = s.chain AND t.block_hash = s.block_hash AND t.block_time = s.block_time`,
		ret:    "chain, block_hash, block_number, block_time", after: blocksCTE}
)

// nid is the SQL of the natural id's hash of the row aliased alias.
func (n naturalTable) nid(alias string) string {
	return "transfers.transfer_uid(" + fmt.Sprintf(n.idArgs, alias) + ")"
}

// insertSQL inserts the staged rows whose natural id is free and claims it, one row per id (of
// several, the one of the highest block); parks the staged rows of orphaned blocks and those
// whose id another stored row holds (or another staged row took); skips rows stored already (a
// redelivery). It returns how many rows it inserted.
func (n naturalTable) insertSQL() string {
	cols := strings.Join(n.cols, ", ")
	scols := "s." + strings.Join(n.cols, ", s.")
	return `WITH st AS (
  SELECT ` + n.nid("s") + ` AS nid, s.* FROM ` + n.stage + ` s WHERE NOT ` + stagedOrphaned + `
), cand AS (
  SELECT DISTINCT ON (nid) * FROM st ORDER BY nid, block_number DESC, block_hash
), ids AS (
  INSERT INTO transfers.` + n.ids + ` (nid) SELECT nid FROM cand ON CONFLICT DO NOTHING RETURNING nid
), won AS (
  SELECT c.* FROM cand c JOIN ids USING (nid)
), ins AS (
  INSERT INTO transfers.` + n.table + ` (` + cols + `) SELECT ` + cols + ` FROM won ON CONFLICT DO NOTHING
  RETURNING ` + n.ret + `
), ` + n.after + `, park AS (
  INSERT INTO transfers.parked_` + n.table + ` (` + cols + `)
  SELECT ` + scols + ` FROM ` + n.stage + ` s WHERE ` + stagedOrphaned + `
  UNION ALL
  SELECT ` + scols + ` FROM st s WHERE NOT EXISTS (SELECT 1 FROM won w WHERE w.nid = s.nid AND w.block_hash = s.block_hash AND w.block_time = s.block_time)
    AND NOT EXISTS (SELECT 1 FROM transfers.` + n.table + ` t WHERE ` + n.stored + `)
  ON CONFLICT DO NOTHING
)
SELECT count(*) FROM ins`
}

// freedTable is the session's table of the natural ids a reorg freed.
func (n naturalTable) freedTable() string { return "freed_" + n.table }

// freeSQL is the CTEs, after a CTE del that deleted rows of the table returning their natural
// columns, that release those rows' ids and remember them in the freed table.
func (n naturalTable) freeSQL() string {
	return `freed AS (INSERT INTO ` + n.freedTable() + ` SELECT ` + n.natural + ` FROM del),
rel AS (DELETE FROM transfers.` + n.ids + ` WHERE nid IN (SELECT ` + n.nid("del") + ` FROM del))`
}

// prepareSQL creates the session's staging and freed tables of a reorg.
func (n naturalTable) prepareSQL() string {
	return `CREATE TEMP TABLE IF NOT EXISTS ` + n.stage + ` (LIKE transfers.` + n.table + ` INCLUDING DEFAULTS) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS ` + n.freedTable() + ` AS SELECT ` + n.natural + ` FROM transfers.` + n.table + ` WITH NO DATA;
TRUNCATE ` + n.freedTable()
}

// promote writes, in a reorg's transaction, the parked rows of chain that the reorg makes
// canonical: those of the blocks it takes back (back) and those of ids it freed whose block is
// not orphaned. Rows that still cannot be written (their id taken again) are parked again.
func (n naturalTable) promote(ctx context.Context, tx pgx.Tx, chain string, back []string) (int, error) {
	cols := strings.Join(n.cols, ", ")
	match := make([]string, 0, 3)
	for _, c := range strings.Split(n.natural, ", ") {
		match = append(match, "f."+c+" = s."+c)
	}
	if _, err := tx.Exec(ctx, `WITH mv AS (
  DELETE FROM transfers.parked_`+n.table+` s WHERE s.chain = $1 AND (s.block_hash = ANY($2)
    OR (EXISTS (SELECT 1 FROM `+n.freedTable()+` f WHERE `+strings.Join(match, " AND ")+`) AND NOT `+stagedOrphaned+`))
  RETURNING `+cols+`
)
INSERT INTO `+n.stage+` (`+cols+`) SELECT `+cols+` FROM mv`, chain, back); err != nil {
		return 0, fmt.Errorf("stage parked %s: %w", n.table, err)
	}
	var k int
	if err := tx.QueryRow(ctx, n.insertSQL()).Scan(&k); err != nil {
		return 0, fmt.Errorf("write parked %s: %w", n.table, err)
	}
	return k, nil
}
