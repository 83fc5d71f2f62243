-- The price in force at a time $2: the newest point of any granularity at or before it (of two
-- points at the same time, the hourly one). Each granularity's newest is read through the
-- primary key (pricing_id, granularity, time).
SELECT price FROM (
    (SELECT time, granularity, price FROM market.prices
     WHERE pricing_id = $1 AND granularity = 1 AND time <= $2 ORDER BY time DESC LIMIT 1)
    UNION ALL
    (SELECT time, granularity, price FROM market.prices
     WHERE pricing_id = $1 AND granularity = 2 AND time <= $2 ORDER BY time DESC LIMIT 1)
) p
ORDER BY time DESC, granularity DESC LIMIT 1
