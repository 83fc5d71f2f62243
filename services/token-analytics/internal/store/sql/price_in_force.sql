-- The price in force at a time $2 of each pricing id of $1 that has one: the newest point of
-- any granularity at or before it (of two points at the same time, the hourly one). Each
-- granularity's newest is read through the primary key (pricing_id, granularity, time), so an
-- id costs two index probes whatever the length of its history.
SELECT i.pricing_id, p.price
FROM (SELECT DISTINCT pricing_id FROM unnest($1::text[]) AS u(pricing_id)) i
CROSS JOIN LATERAL (
    SELECT price FROM (
        (SELECT time, granularity, price FROM market.prices
         WHERE pricing_id = i.pricing_id AND granularity = 1 AND time <= $2 ORDER BY time DESC LIMIT 1)
        UNION ALL
        (SELECT time, granularity, price FROM market.prices
         WHERE pricing_id = i.pricing_id AND granularity = 2 AND time <= $2 ORDER BY time DESC LIMIT 1)
    ) q
    ORDER BY time DESC, granularity DESC LIMIT 1
) p
