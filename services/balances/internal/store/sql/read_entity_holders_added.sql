-- The operator entities a caller added addresses to ($3 entity ids, parallel to $4 addresses of
-- the chain's type), with what each holds of a token on a chain for that caller: its maintained
-- total (entity_current, by primary key) plus the current balances of the addresses added to it
-- (current, by primary key), and what attributions say of the entity. Entities attributions do
-- not know are left out, as /balances/entity answers them 404.
SELECT s.entity_id, (coalesce(x.balance, 0) + s.added)::text, e.name, e.type, e.note, e.service,
       e.website, e.twitter, e.linkedin
FROM (
  SELECT a.entity_id, coalesce(sum(c.balance), 0) AS added
  FROM unnest($3::text[], $4::text[]) AS a(entity_id, address)
  LEFT JOIN balances.current c ON c.address = a.address AND c.chain = $1 AND c.token = $2 AND c.balance > 0
  GROUP BY a.entity_id
) s
JOIN balances.entities e ON e.id = s.entity_id
LEFT JOIN balances.entity_current x ON x.entity_id = s.entity_id AND x.chain = $1 AND x.token = $2
ORDER BY s.entity_id
