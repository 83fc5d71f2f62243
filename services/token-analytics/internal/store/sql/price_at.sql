-- The newest price of a granularity at or before a time.
SELECT price FROM market.prices
WHERE pricing_id = $1 AND granularity = $2 AND time <= $3
ORDER BY time DESC LIMIT 1
