-- The session's staging and freed-id tables of a reorg's transactions, the freed ids emptied.
CREATE TEMP TABLE IF NOT EXISTS stage_transactions (LIKE transfers.transactions INCLUDING DEFAULTS) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS freed_transactions AS SELECT hash, chain FROM transfers.transactions WITH NO DATA;
TRUNCATE freed_transactions
