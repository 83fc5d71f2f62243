SELECT k.chain_type, k.address, a.entity_id
FROM unnest($1::text[], $2::text[]) AS k(chain_type, address)
JOIN balances.attributions a ON a.chain_type = k.chain_type AND a.address = k.address
WHERE a.entity_id <> ''
