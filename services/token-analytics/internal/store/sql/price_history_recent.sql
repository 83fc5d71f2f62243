-- The points of the pricing id $1 with $2 < time <= $3, of the finest granularity stored at each
-- time (the hourly point where there is one, else the daily), newest first, at most $4: one
-- range read of the primary key per granularity.
SELECT DISTINCT ON (time) time, price, coalesce(market_cap, 0), coalesce(volume, 0)
FROM market.prices
WHERE pricing_id = $1 AND granularity IN (1, 2) AND time > $2 AND time <= $3
ORDER BY time DESC, granularity DESC
LIMIT $4
