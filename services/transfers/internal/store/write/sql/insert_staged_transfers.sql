-- Inserts the staged transfers (stage_new_transfers) that are new and whose natural id is free,
-- claims their ids and queues exactly those rows for the rollups; parks the staged rows of
-- orphaned blocks and those whose id another row holds (or another staged row took, of a lower
-- block); skips rows stored already (a redelivery). Returns how many rows it inserted.
WITH st AS (
  SELECT transfers.transfer_uid(s.tx_hash, s.chain, s.id, '') AS nid, s.* FROM stage_new_transfers s WHERE NOT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)
), cand AS (
  SELECT DISTINCT ON (nid) * FROM st ORDER BY nid, block_number DESC, block_hash
), ids AS (
  INSERT INTO transfers.transfer_ids (nid) SELECT nid FROM cand ON CONFLICT DO NOTHING RETURNING nid
), won AS (
  SELECT c.* FROM cand c JOIN ids USING (nid)
), ins AS (
  INSERT INTO transfers.transfers (chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr, token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract, uid) SELECT chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr, token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract, uid FROM won ON CONFLICT DO NOTHING
  RETURNING block_time, uid, block_number, chain
), q AS (INSERT INTO transfers.rollup_keys (block_time, uid, block_number, chain) SELECT block_time, uid, block_number, chain FROM ins), park AS (
  INSERT INTO transfers.parked_transfers (chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr, token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract, uid)
  SELECT s.chain, s.id, s.tx_hash, s.block_hash, s.block_number, s.block_time, s.tx_index, s.log_index, s.from_addr, s.to_addr, s.token, s.token_id, s.token_name, s.token_symbol, s.token_decimals, s.amount, s.unit_value, s.usd, s.type, s.from_is_contract, s.to_is_contract, s.uid FROM stage_new_transfers s WHERE EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)
  UNION ALL
  SELECT s.chain, s.id, s.tx_hash, s.block_hash, s.block_number, s.block_time, s.tx_index, s.log_index, s.from_addr, s.to_addr, s.token, s.token_id, s.token_name, s.token_symbol, s.token_decimals, s.amount, s.unit_value, s.usd, s.type, s.from_is_contract, s.to_is_contract, s.uid FROM st s WHERE NOT EXISTS (SELECT 1 FROM won w WHERE w.nid = s.nid AND w.block_hash = s.block_hash AND w.block_time = s.block_time)
    AND NOT EXISTS (SELECT 1 FROM transfers.transfers t WHERE t.block_time = s.block_time AND t.uid = s.uid)
  ON CONFLICT DO NOTHING
)
SELECT count(*) FROM ins
