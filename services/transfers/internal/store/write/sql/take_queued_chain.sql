-- Moves every queued row of chain $1 into apply_rows (as take_queued_batch): for a reorg naming a block without its number.
WITH d AS (
  DELETE FROM transfers.rollup_keys WHERE chain = $1
  RETURNING block_time, uid
) INSERT INTO apply_rows (chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid) SELECT r.* FROM d CROSS JOIN LATERAL (
  SELECT chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid FROM transfers.transfers t WHERE t.block_time = d.block_time AND t.uid = d.uid OFFSET 0) r
