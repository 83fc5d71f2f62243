SELECT a.chain_type, a.address, a.label, a.deposit_service_id, a.is_contract,
       e.id, e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin,
       p.id, p.name, p.type, p.note, p.service, p.website, p.twitter, p.linkedin
FROM unnest($1::text[], $2::text[]) AS k(chain_type, address)
JOIN balances.attributions a ON a.chain_type = k.chain_type AND a.address = k.address
LEFT JOIN balances.entities e ON e.id = nullif(a.entity_id, '')
LEFT JOIN balances.entities p ON p.id = nullif(a.predicted_id, '')
