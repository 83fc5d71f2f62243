-- The pricing ids among $1 the registry holds (existence only: no deployments, no prices).
SELECT pricing_id FROM market.tokens WHERE pricing_id = ANY($1) ORDER BY pricing_id
