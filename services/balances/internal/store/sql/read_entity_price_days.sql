-- The daily closes an operator entity's history on chains $2 needs: for every pricing id its
-- tokens can resolve to (the registry's, the one an observation carried, and for a native coin
-- the chain catalogue's: $3 chains, $4 ids), the closes from its first change day (not before
-- day $5) to day $6, led by the last close before that day (as read_price_days).
WITH k AS (
  SELECT chain, token, min(day) AS first FROM balances.entity_change
  WHERE entity_id = $1 AND chain = ANY($2::text[]) AND delta <> 0
  GROUP BY chain, token
), ids AS (
  SELECT d.pricing_id AS id FROM k JOIN balances.deployments d ON d.chain = k.chain AND d.token = k.token
  UNION
  SELECT o.token_id FROM k JOIN balances.observed_tokens o ON o.chain = k.chain AND o.token = k.token WHERE o.token_id <> ''
  UNION
  SELECT n.id FROM k JOIN unnest($3::text[], $4::text[]) AS n(chain, id) ON n.chain = k.chain AND k.token = '' AND n.id <> ''
), f AS (
  SELECT greatest(min(first), $5::date) AS from_day FROM k
)
SELECT ids.id, d.day, d.price
FROM ids CROSS JOIN f
CROSS JOIN LATERAL (
  (SELECT p.day, p.price FROM balances.price_days p WHERE p.pricing_id = ids.id AND p.day < f.from_day ORDER BY p.day DESC LIMIT 1)
  UNION ALL
  (SELECT p.day, p.price FROM balances.price_days p WHERE p.pricing_id = ids.id AND p.day >= f.from_day AND p.day <= $6::date)
) d
