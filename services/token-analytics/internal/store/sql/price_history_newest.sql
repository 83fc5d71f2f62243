-- The newest $3 points of granularity $2 of the pricing id $1, newest first: a backward scan of
-- the primary key that stops after $3 rows.
SELECT time, price, coalesce(market_cap, 0), coalesce(volume, 0) FROM market.prices
WHERE pricing_id = $1 AND granularity = $2
ORDER BY time DESC
LIMIT $3
