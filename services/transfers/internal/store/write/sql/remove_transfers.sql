-- Deletes chain $1's transfers of blocks $2 (hashes) at times $3 (which prune the partitions),
-- keeps their pair rows in sub_pairs to subtract, frees their natural ids (remembered in
-- freed_transfers) and returns how many it deleted. The delete voids every replica's remembered
-- capped counts (migration 20's trigger).
WITH del AS (
  DELETE FROM transfers.transfers WHERE chain = $1 AND block_hash = ANY($2) AND block_time = ANY($3)
  RETURNING chain, block_time, from_addr, to_addr, token, token_id, unit_value, usd, tx_hash, id
), keep AS (INSERT INTO sub_pairs SELECT from_addr, to_addr, date_trunc('hour', block_time, 'UTC') AS bucket, chain, token, min(token_id) AS token_id,
         count(*) AS n, sum(coalesce(usd, 0)::numeric) AS usd, sum(unit_value::numeric) AS value
  FROM del GROUP BY 1, 2, 3, 4, 5), freed AS (INSERT INTO freed_transfers SELECT tx_hash, chain, id FROM del),
rel AS (DELETE FROM transfers.transfer_ids WHERE nid IN (SELECT transfers.transfer_uid(del.tx_hash, del.chain, del.id, '') FROM del))
SELECT count(*) FROM del
