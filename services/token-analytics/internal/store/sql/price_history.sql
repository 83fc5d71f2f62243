SELECT time, price, coalesce(market_cap, 0), coalesce(volume, 0) FROM market.prices
WHERE pricing_id = $1 AND granularity = $2 AND time >= $3 AND time <= $4
ORDER BY time
