-- The session's staging table of a transfers write (emptied at commit).
CREATE TEMP TABLE IF NOT EXISTS stage_new_transfers (LIKE transfers.transfers INCLUDING DEFAULTS)
    ON COMMIT DELETE ROWS
