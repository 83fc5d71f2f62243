-- +goose Up
-- One row per natural id, whatever block holds it (docs/transfers.md, "Natural ids"). The chain
-- tables are partitioned by month of block time, so their unique indexes include the block
-- time and cannot refuse the same transfer at another time (ingest publishing it again in
-- another block). These tables are not partitioned: their primary key is the natural id alone,
-- as a 128-bit hash (transfers.transfer_uid with an empty block hash: (tx hash, chain, id) for
-- transfers and swaps, (hash, chain) for transactions). A write claims the ids of its rows in the
-- same transaction; a row whose id another block's row holds is parked until a reorg removes
-- that row. A reorg that removes a row frees its id.
CREATE TABLE transfers.transfer_ids (nid uuid PRIMARY KEY);
CREATE TABLE transfers.swap_ids (nid uuid PRIMARY KEY);
CREATE TABLE transfers.transaction_ids (nid uuid PRIMARY KEY);

-- Rows stored before this migration claim their ids; of a natural id stored in several blocks,
-- every row stays (they are in the rollups) and the id is claimed once.
INSERT INTO transfers.transfer_ids SELECT DISTINCT transfers.transfer_uid(tx_hash, chain, id, '') FROM transfers.transfers;
INSERT INTO transfers.swap_ids SELECT DISTINCT transfers.transfer_uid(tx_hash, chain, id, '') FROM transfers.swaps;
INSERT INTO transfers.transaction_ids SELECT DISTINCT transfers.transfer_uid(hash, chain, '', '') FROM transfers.transactions;

-- A reorg looks up the parked rows of the natural ids it frees.
CREATE INDEX parked_transfers_natural ON transfers.parked_transfers (tx_hash, chain, id);
CREATE INDEX parked_swaps_natural ON transfers.parked_swaps (tx_hash, chain, id);
CREATE INDEX parked_transactions_natural ON transfers.parked_transactions (hash, chain);

-- +goose Down
DROP INDEX transfers.parked_transfers_natural, transfers.parked_swaps_natural, transfers.parked_transactions_natural;
DROP TABLE transfers.transfer_ids, transfers.swap_ids, transfers.transaction_ids;
