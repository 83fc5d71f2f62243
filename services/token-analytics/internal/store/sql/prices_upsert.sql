-- Stores price points; returns the ones that are new or changed (to publish), in key order, each
-- with whether it replaced the point holding its pricing id's stored high with a lower price or
-- its stored low with a higher one (the write recomputes those ids' extremes from history).
-- sql/price_extremes_widen.sql ran before it in the transaction: market.price_extremes already
-- covers every price of the batch and its rows of these ids are locked, so no other writer of
-- them is in flight and `old` (read with the statement's snapshot, before the insert) is what
-- the insert replaces.
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int2[], $3::timestamptz[], $4::float8[], $5::float8[], $6::float8[])
        AS t(pricing_id, granularity, time, price, market_cap, volume)
),
old AS (
    SELECT p.pricing_id, p.granularity, p.time, p.price
    FROM input i JOIN market.prices p USING (pricing_id, granularity, time)
),
up AS (
    INSERT INTO market.prices AS p (pricing_id, granularity, time, price, market_cap, volume)
    SELECT pricing_id, granularity, time, price, market_cap, volume FROM input
    ORDER BY pricing_id, granularity, time
    ON CONFLICT (pricing_id, granularity, time) DO UPDATE SET
        price = excluded.price, market_cap = excluded.market_cap, volume = excluded.volume
    WHERE (p.price, p.market_cap, p.volume) IS DISTINCT FROM (excluded.price, excluded.market_cap, excluded.volume)
    RETURNING p.pricing_id, p.granularity, p.time, p.price, p.market_cap, p.volume
)
SELECT up.pricing_id, up.granularity, up.time, up.price, up.market_cap, up.volume,
       coalesce((o.price >= e.high AND up.price < o.price) OR (o.price <= e.low AND up.price > o.price), false)
FROM up
LEFT JOIN old o USING (pricing_id, granularity, time)
LEFT JOIN market.price_extremes e USING (pricing_id)
ORDER BY up.pricing_id, up.granularity, up.time
