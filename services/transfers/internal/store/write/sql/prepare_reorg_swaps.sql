-- The session's staging and freed-id tables of a reorg's swaps, the freed ids emptied.
CREATE TEMP TABLE IF NOT EXISTS stage_swaps (LIKE transfers.swaps INCLUDING DEFAULTS) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS freed_swaps AS SELECT tx_hash, chain, id FROM transfers.swaps WITH NO DATA;
TRUNCATE freed_swaps
