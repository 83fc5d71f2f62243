-- Moves chain $1's parked transfers that a reorg makes canonical into stage_new_transfers:
-- those of the blocks it takes back ($2, hashes) and those of ids it freed whose block is not
-- orphaned.
WITH mv AS (
  DELETE FROM transfers.parked_transfers s WHERE s.chain = $1 AND (s.block_hash = ANY($2)
    OR (EXISTS (SELECT 1 FROM freed_transfers f WHERE f.tx_hash = s.tx_hash AND f.chain = s.chain AND f.id = s.id) AND NOT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)))
  RETURNING chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr, token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract, uid
)
INSERT INTO stage_new_transfers (chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr, token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract, uid) SELECT chain, id, tx_hash, block_hash, block_number, block_time, tx_index, log_index, from_addr, to_addr, token, token_id, token_name, token_symbol, token_decimals, amount, unit_value, usd, type, from_is_contract, to_is_contract, uid FROM mv
