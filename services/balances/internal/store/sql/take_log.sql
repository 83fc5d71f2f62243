-- Moves up to $1 rows of the observation log into this transaction's stage (the writers' lock
-- is held, so no other applier takes the same rows; rows appended after this statement's
-- snapshot stay for the next round).
WITH taken AS (
  DELETE FROM balances.observation_log
  WHERE ctid = ANY (ARRAY (SELECT ctid FROM balances.observation_log LIMIT $1))
  RETURNING chain, address, token, block_number, block_hash, block_time, balance, owner, kind,
            token_id, token_name, token_symbol, token_decimals
)
INSERT INTO stage_obs (chain, address, token, block_number, block_hash, block_time, balance, owner, kind,
                       token_id, token_name, token_symbol, token_decimals)
SELECT * FROM taken
