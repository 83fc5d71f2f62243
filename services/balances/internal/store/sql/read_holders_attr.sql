-- A page of a token's largest address holders on chain $1 (chain type $5) with each address's
-- attribution and its entities, so the page needs no second read of attributions. Each join is
-- a LATERAL … LIMIT 1 (one primary-key probe per holder): with the page size a parameter, a
-- plain join lets a generic plan hash the whole attributions table.
SELECT h.address, h.balance::text, a.address IS NOT NULL, coalesce(a.label, ''), coalesce(a.deposit_service_id, ''),
       coalesce(a.is_contract, false),
       e.id, e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin,
       p.id, p.name, p.type, p.note, p.service, p.website, p.twitter, p.linkedin
FROM (
  SELECT c.address, c.balance FROM balances.current c
  WHERE c.chain = $1 AND c.token = $2 AND c.balance > 0
  ORDER BY c.balance DESC, c.address
  LIMIT $3 OFFSET $4
) h
LEFT JOIN LATERAL (
  SELECT a.address, a.label, a.deposit_service_id, a.is_contract, a.entity_id, a.predicted_id FROM balances.attributions a
  WHERE a.chain_type = $5 AND a.address = h.address LIMIT 1
) a ON true
LEFT JOIN LATERAL (SELECT * FROM balances.entities e WHERE e.id = nullif(a.entity_id, '') LIMIT 1) e ON true
LEFT JOIN LATERAL (SELECT * FROM balances.entities p WHERE p.id = nullif(a.predicted_id, '') LIMIT 1) p ON true
ORDER BY h.balance DESC, h.address
