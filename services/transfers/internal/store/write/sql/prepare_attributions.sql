-- groupLock (7283400111) exclusive and the session's tables of a batch of attribution changes:
-- the staged rows, the addresses the batch names, and their groups before and after it.
SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; SELECT pg_advisory_xact_lock(7283400111);
CREATE TEMP TABLE IF NOT EXISTS stage_attributions (LIKE transfers.attributions) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS relabel_addrs (address text COLLATE "C" PRIMARY KEY) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS memb_before (address text COLLATE "C", grp text COLLATE "C") ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS memb_after (address text COLLATE "C", grp text COLLATE "C") ON COMMIT DELETE ROWS
