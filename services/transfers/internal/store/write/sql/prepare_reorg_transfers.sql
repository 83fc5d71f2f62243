-- The session's staging and freed-id tables of a reorg's transfers, the freed ids emptied.
CREATE TEMP TABLE IF NOT EXISTS stage_new_transfers (LIKE transfers.transfers INCLUDING DEFAULTS) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS freed_transfers AS SELECT tx_hash, chain, id FROM transfers.transfers WITH NO DATA;
TRUNCATE freed_transfers
