CREATE TEMP TABLE IF NOT EXISTS stage_obs (
  chain text, address text, token text, block_number bigint, block_hash text, block_time timestamptz,
  balance numeric(78,0), owner text, kind text, token_id text, token_name text, token_symbol text,
  token_decimals int
) ON COMMIT DELETE ROWS
