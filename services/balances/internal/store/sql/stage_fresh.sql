-- A round's non-void observations, with whether an operator entity holds the address (held
-- keys take the store's full path, which also moves entity rows).
CREATE TEMP TABLE IF NOT EXISTS fresh_obs (
  chain text, address text, token text, block_number bigint, block_hash text, block_time timestamptz,
  balance numeric(78,0), owner text, kind text, held boolean
) ON COMMIT DELETE ROWS
