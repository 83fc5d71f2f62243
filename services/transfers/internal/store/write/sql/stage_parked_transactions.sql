-- Moves chain $1's parked transactions that a reorg makes canonical into stage_transactions:
-- those of the blocks it takes back ($2, hashes) and those of ids it freed whose block is not
-- orphaned.
WITH mv AS (
  DELETE FROM transfers.parked_transactions s WHERE s.chain = $1 AND (s.block_hash = ANY($2)
    OR (EXISTS (SELECT 1 FROM freed_transactions f WHERE f.hash = s.hash AND f.chain = s.chain) AND NOT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)))
  RETURNING chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr, contract_created, nonce, success, value, value_usd, gas_used, gas_price, effective_gas_price, fee, fee_usd, method_id
)
INSERT INTO stage_transactions (chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr, contract_created, nonce, success, value, value_usd, gas_used, gas_price, effective_gas_price, fee, fee_usd, method_id) SELECT chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr, contract_created, nonce, success, value, value_usd, gas_used, gas_price, effective_gas_price, fee, fee_usd, method_id FROM mv
