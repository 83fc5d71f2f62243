-- Moves chain $1's parked swaps that a reorg makes canonical into stage_swaps:
-- those of the blocks it takes back ($2, hashes) and those of ids it freed whose block is not
-- orphaned.
WITH mv AS (
  DELETE FROM transfers.parked_swaps s WHERE s.chain = $1 AND (s.block_hash = ANY($2)
    OR (EXISTS (SELECT 1 FROM freed_swaps f WHERE f.tx_hash = s.tx_hash AND f.chain = s.chain AND f.id = s.id) AND NOT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o WHERE o.chain = s.chain AND o.block_hash = s.block_hash)))
  RETURNING chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver, token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0, token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol
)
INSERT INTO stage_swaps (chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver, token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0, token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol) SELECT chain, id, tx_hash, block_hash, block_number, block_time, log_index, contract_addr, sender, receiver, token0, token0_id, token0_name, token0_symbol, token0_decimals, amount0, token1, token1_id, token1_name, token1_symbol, token1_decimals, amount1, usd, valid, protocol FROM mv
