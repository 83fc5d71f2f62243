-- The price in force at each time of $2 of the pricing id $1, one row per time in the order of
-- $2 (price NULL when there is none): the newest point of any granularity at or before it, of
-- two at the same time the hourly one, as price_in_force.sql. Each time costs two probes of the
-- primary key (pricing_id, granularity, time), whatever the length of the history.
SELECT p.price
FROM unnest($2::timestamptz[]) WITH ORDINALITY AS a(at, i)
LEFT JOIN LATERAL (
    SELECT price FROM (
        (SELECT time, granularity, price FROM market.prices
         WHERE pricing_id = $1 AND granularity = 1 AND time <= a.at ORDER BY time DESC LIMIT 1)
        UNION ALL
        (SELECT time, granularity, price FROM market.prices
         WHERE pricing_id = $1 AND granularity = 2 AND time <= a.at ORDER BY time DESC LIMIT 1)
    ) q
    ORDER BY time DESC, granularity DESC LIMIT 1
) p ON true
ORDER BY a.i
