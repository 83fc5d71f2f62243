-- The points a consumer reading market.prices.v1 from its start needs to price any time from $1
-- on: per pricing id with a quote, deployed on the chains $2 (all when NULL), and per stored
-- granularity, the newest point at or before $1 and the points after it (the newest $3 of
-- them); and the quote itself, as a tick, when it is after $1 and no stored point is at its
-- time (a live quote). Oldest first per pricing id. Every read goes through the primary key.
WITH ids AS (
    SELECT t.pricing_id, t.price, t.price_time, t.market_cap, t.volume_24h FROM market.tokens t
    WHERE t.price IS NOT NULL
      AND EXISTS (SELECT 1 FROM market.deployments d WHERE d.pricing_id = t.pricing_id AND ($2::text[] IS NULL OR d.chain = ANY($2)))
), points AS (
    SELECT i.pricing_id, g.granularity, p.time, p.price, p.market_cap, p.volume
    FROM ids i
    CROSS JOIN (VALUES (1::int2), (2::int2)) AS g(granularity)
    CROSS JOIN LATERAL (
        (SELECT p.time, p.price, p.market_cap, p.volume FROM market.prices p
         WHERE p.pricing_id = i.pricing_id AND p.granularity = g.granularity AND p.time > $1
         ORDER BY p.time DESC LIMIT $3)
        UNION ALL
        (SELECT p.time, p.price, p.market_cap, p.volume FROM market.prices p
         WHERE p.pricing_id = i.pricing_id AND p.granularity = g.granularity AND p.time <= $1
         ORDER BY p.time DESC LIMIT 1)
    ) p
    UNION ALL
    SELECT i.pricing_id, 3::int2, i.price_time, i.price, i.market_cap, i.volume_24h
    FROM ids i
    WHERE i.price_time > $1
      AND NOT EXISTS (SELECT 1 FROM market.prices p
                      WHERE p.pricing_id = i.pricing_id AND p.granularity IN (1, 2) AND p.time = i.price_time)
)
SELECT pricing_id, granularity, time, price, market_cap, volume FROM points
ORDER BY pricing_id, time, granularity
