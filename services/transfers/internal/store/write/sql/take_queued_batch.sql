-- Moves up to $1 queued rows no other apply holds out of the queue and into apply_rows. Each row
-- is read by its key through the natural key's index, its partition pruned at run time: the
-- lateral subquery (kept apart by OFFSET 0) is a parameterised scan, so the planner cannot hash a
-- batch against every partition.
WITH d AS (
  DELETE FROM transfers.rollup_keys WHERE ctid = ANY(ARRAY(SELECT ctid FROM transfers.rollup_keys LIMIT $1 FOR UPDATE SKIP LOCKED))
  RETURNING block_time, uid
) INSERT INTO apply_rows (chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid) SELECT r.* FROM d CROSS JOIN LATERAL (
  SELECT chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd, uid FROM transfers.transfers t WHERE t.block_time = d.block_time AND t.uid = d.uid OFFSET 0) r
