-- Moves the queued rows of chain $1's blocks numbered $2 into apply_rows (as take_queued_batch):
-- the rows of a reorg's blocks, and of any other block of the same numbers (applying a queued row
-- early is always right).
WITH d AS (
  DELETE FROM transfers.rollup_keys WHERE chain = $1 AND block_number = ANY($2)
  RETURNING block_time, uid
) INSERT INTO apply_rows (chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid) SELECT r.* FROM d CROSS JOIN LATERAL (
  SELECT chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid FROM transfers.transfers t WHERE t.block_time = d.block_time AND t.uid = d.uid OFFSET 0) r
