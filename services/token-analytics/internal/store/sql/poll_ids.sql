-- Pricing ids to poll: those deployed on the chains $1 (all when NULL), the largest first.
SELECT t.pricing_id FROM market.tokens t
WHERE EXISTS (SELECT 1 FROM market.deployments d WHERE d.pricing_id = t.pricing_id AND ($1::text[] IS NULL OR d.chain = ANY($1)))
ORDER BY t.market_cap DESC NULLS LAST, t.pricing_id
LIMIT $2
