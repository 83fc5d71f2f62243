-- The transaction with hash $1 on every chain it is stored on, amounts as text.
SELECT chain, hash, block_hash, block_number, block_time, tx_index, from_addr, to_addr,
       contract_created, nonce, success, value::text, value_usd, gas_used, gas_price::text, effective_gas_price::text, fee::text,
       fee_usd, method_id
FROM transfers.transactions WHERE hash = $1 ORDER BY chain
