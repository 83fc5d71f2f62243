-- The session's tables a rollup subtraction reads: sub_pairs (pair rows to subtract) and sub_memb
-- (their addresses' groups).
CREATE TEMP TABLE IF NOT EXISTS sub_pairs (LIKE transfers.pair_hourly) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS sub_memb (address text COLLATE "C", grp text COLLATE "C") ON COMMIT DELETE ROWS
