SELECT chain_type, address FROM balances.attributions
WHERE entity_id = $1 AND chain_type = ANY($2::text[])
ORDER BY chain_type, address
LIMIT $3
