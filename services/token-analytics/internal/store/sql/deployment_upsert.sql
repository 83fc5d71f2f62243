-- Sets where a pricing id is deployed and returns the pricing id the deployment had before
-- (NULL when new), whose registry record changes too.
WITH old AS (
    SELECT pricing_id FROM market.deployments WHERE chain = $1 AND address = $2
)
INSERT INTO market.deployments AS d (chain, address, pricing_id, decimals)
VALUES ($1, $2, $3, $4)
ON CONFLICT (chain, address) DO UPDATE SET pricing_id = excluded.pricing_id, decimals = excluded.decimals
RETURNING (SELECT pricing_id FROM old)
