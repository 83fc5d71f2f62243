-- Priced registry entries deployed on the chains $1 (all when NULL), by 24 h volume.
SELECT t.pricing_id FROM market.tokens t
WHERE t.price IS NOT NULL
  AND EXISTS (SELECT 1 FROM market.deployments d WHERE d.pricing_id = t.pricing_id AND ($1::text[] IS NULL OR d.chain = ANY($1)))
ORDER BY t.volume_24h DESC NULLS LAST, t.market_cap DESC NULLS LAST, t.pricing_id
LIMIT $2
