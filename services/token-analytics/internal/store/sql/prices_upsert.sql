-- Stores price points; returns the ones that are new or changed (to publish).
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int2[], $3::timestamptz[], $4::float8[], $5::float8[], $6::float8[])
        AS t(pricing_id, granularity, time, price, market_cap, volume)
)
INSERT INTO market.prices AS p (pricing_id, granularity, time, price, market_cap, volume)
SELECT pricing_id, granularity, time, price, market_cap, volume FROM input
ORDER BY pricing_id, granularity, time
ON CONFLICT (pricing_id, granularity, time) DO UPDATE SET
    price = excluded.price, market_cap = excluded.market_cap, volume = excluded.volume
WHERE (p.price, p.market_cap, p.volume) IS DISTINCT FROM (excluded.price, excluded.market_cap, excluded.volume)
RETURNING p.pricing_id, p.granularity, p.time, p.price, p.market_cap, p.volume
