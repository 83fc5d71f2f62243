-- A page of the operator entities holding the most of a token on a chain, with what
-- attributions say of each entity (an entity attributions never named has empty fields); the
-- entity is a LATERAL … LIMIT 1 probe per holder, whatever plan the page size gets.
SELECT h.entity_id, h.balance::text, coalesce(e.name, ''), coalesce(e.type, ''), coalesce(e.note, ''), coalesce(e.service, ''),
       coalesce(e.website, ''), coalesce(e.twitter, ''), coalesce(e.linkedin, '')
FROM (
  SELECT x.entity_id, x.balance FROM balances.entity_current x
  WHERE x.chain = $1 AND x.token = $2 AND x.balance > 0
  ORDER BY x.balance DESC, x.entity_id
  LIMIT $3 OFFSET $4
) h
LEFT JOIN LATERAL (SELECT * FROM balances.entities e WHERE e.id = h.entity_id LIMIT 1) e ON true
ORDER BY h.balance DESC, h.entity_id
