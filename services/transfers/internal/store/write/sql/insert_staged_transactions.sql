-- Inserts the staged transactions (stage_transactions) as insert_staged_transfers does its rows,
-- recording their blocks instead of queueing rollups. Returns how many it inserted.
WITH st AS (
  SELECT transfers.transfer_uid(s.hash, s.chain, '', '') AS nid, s.* FROM stage_transactions s WHERE NOT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)
), cand AS (
  SELECT DISTINCT ON (nid) * FROM st ORDER BY nid, block_number DESC, block_hash
), ids AS (
  INSERT INTO transfers.transaction_ids (nid) SELECT nid FROM cand ON CONFLICT DO NOTHING RETURNING nid
), won AS (
  SELECT c.* FROM cand c JOIN ids USING (nid)
), ins AS (
  INSERT INTO transfers.transactions (chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr, contract_created, nonce, success, value, value_usd, gas_used, gas_price, effective_gas_price, fee, fee_usd, method_id) SELECT chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr, contract_created, nonce, success, value, value_usd, gas_used, gas_price, effective_gas_price, fee, fee_usd, method_id FROM won ON CONFLICT DO NOTHING
  RETURNING chain, block_hash, block_number, block_time
), blk AS (
  INSERT INTO transfers.blocks (chain, block_number, block_hash, block_time)
  SELECT DISTINCT chain, block_number, block_hash, block_time FROM ins ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING
), park AS (
  INSERT INTO transfers.parked_transactions (chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr, contract_created, nonce, success, value, value_usd, gas_used, gas_price, effective_gas_price, fee, fee_usd, method_id)
  SELECT s.chain, s.hash, s.block_hash, s.block_number, s.block_time, s.tx_index, s.from_addr, s.to_addr, s.contract_created, s.nonce, s.success, s.value, s.value_usd, s.gas_used, s.gas_price, s.effective_gas_price, s.fee, s.fee_usd, s.method_id FROM stage_transactions s WHERE EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)
  UNION ALL
  SELECT s.chain, s.hash, s.block_hash, s.block_number, s.block_time, s.tx_index, s.from_addr, s.to_addr, s.contract_created, s.nonce, s.success, s.value, s.value_usd, s.gas_used, s.gas_price, s.effective_gas_price, s.fee, s.fee_usd, s.method_id FROM st s WHERE NOT EXISTS (SELECT 1 FROM won w WHERE w.nid = s.nid AND w.block_hash = s.block_hash AND w.block_time = s.block_time)
    AND NOT EXISTS (SELECT 1 FROM transfers.transactions t WHERE t.hash = s.hash AND t.chain = s.chain AND t.block_hash = s.block_hash AND t.block_time = s.block_time)
  ON CONFLICT DO NOTHING
)
SELECT count(*) FROM ins
