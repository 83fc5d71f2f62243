-- A page of a token's largest address holders on chain $1 (chain type $5), from top_holders
-- (which holds at least the 1,000 largest), with each address's attribution and its entities,
-- so the page needs no second read of attributions. Each join is
-- a LATERAL … LIMIT 1 (one primary-key probe per holder): with the page size a parameter, a
-- plain join lets a generic plan hash the whole attributions table.
SELECT h.address, h.balance::text, a.address IS NOT NULL, coalesce(a.label, ''), coalesce(a.deposit_service_id, ''),
       coalesce(a.is_contract, false),
       e.id, e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin,
       p.id, p.name, p.type, p.note, p.service, p.website, p.twitter, p.linkedin
FROM (
  SELECT t.address, t.balance FROM balances.top_holders t
  WHERE t.chain = $1 AND t.token = $2
  ORDER BY t.balance DESC, t.address
  LIMIT $3 OFFSET $4
) h
LEFT JOIN LATERAL (
  SELECT a.address, a.label, a.deposit_service_id, a.is_contract, a.entity_id, a.predicted_id FROM balances.attributions a
  WHERE a.chain_type = $5 AND a.address = h.address LIMIT 1
) a ON true
LEFT JOIN LATERAL (SELECT * FROM balances.entities e WHERE e.id = nullif(a.entity_id, '') LIMIT 1) e ON true
LEFT JOIN LATERAL (SELECT * FROM balances.entities p WHERE p.id = nullif(a.predicted_id, '') LIMIT 1) p ON true
ORDER BY h.balance DESC, h.address
