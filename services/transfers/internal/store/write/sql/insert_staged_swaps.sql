-- Inserts the staged swaps (stage_swaps) as insert_staged_transfers does its rows, recording
-- their blocks instead of queueing rollups. Returns how many it inserted.
WITH st AS (
  SELECT transfers.transfer_uid(s.tx_hash, s.chain, s.id, '') AS nid, s.* FROM stage_swaps s WHERE NOT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)
), cand AS (
  SELECT DISTINCT ON (nid) * FROM st ORDER BY nid, block_number DESC, block_hash
), ids AS (
  INSERT INTO transfers.swap_ids (nid) SELECT nid FROM cand ON CONFLICT DO NOTHING RETURNING nid
), won AS (
  SELECT c.* FROM cand c JOIN ids USING (nid)
), ins AS (
  INSERT INTO transfers.swaps (chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver, token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0, token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol) SELECT chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver, token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0, token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol FROM won ON CONFLICT DO NOTHING
  RETURNING chain, block_hash, block_number, block_time
), blk AS (
  INSERT INTO transfers.blocks (chain, block_number, block_hash, block_time)
  SELECT DISTINCT chain, block_number, block_hash, block_time FROM ins ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING
), park AS (
  INSERT INTO transfers.parked_swaps (chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver, token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0, token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol)
  SELECT s.chain, s.id, s.tx_hash, s.block_hash, s.block_number, s.block_time, s.log_index, s.contract_addr, s.sender, s.receiver, s.token0, s.token0_id, s.token0_name, s.token0_symbol, s.token0_decimals, s.amount0, s.token1, s.token1_id, s.token1_name, s.token1_symbol, s.token1_decimals, s.amount1, s.usd, s.valid, s.protocol FROM stage_swaps s WHERE EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)
  UNION ALL
  SELECT s.chain, s.id, s.tx_hash, s.block_hash, s.block_number, s.block_time, s.log_index, s.contract_addr, s.sender, s.receiver, s.token0, s.token0_id, s.token0_name, s.token0_symbol, s.token0_decimals, s.amount0, s.token1, s.token1_id, s.token1_name, s.token1_symbol, s.token1_decimals, s.amount1, s.usd, s.valid, s.protocol FROM st s WHERE NOT EXISTS (SELECT 1 FROM won w WHERE w.nid = s.nid AND w.block_hash = s.block_hash AND w.block_time = s.block_time)
    AND NOT EXISTS (SELECT 1 FROM transfers.swaps t WHERE t.tx_hash = s.tx_hash AND t.chain = s.chain AND t.id = s.id AND t.block_hash = s.block_hash AND t.block_time = s.block_time)
  ON CONFLICT DO NOTHING
)
SELECT count(*) FROM ins
