-- groupLock (7283400111) shared and the session's staging table of a transactions write.
SELECT pg_advisory_xact_lock_shared(7283400111);
CREATE TEMP TABLE IF NOT EXISTS stage_transactions
    (LIKE transfers.transactions INCLUDING DEFAULTS) ON COMMIT DELETE ROWS
