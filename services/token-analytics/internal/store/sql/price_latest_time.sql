SELECT max(time) FROM market.prices WHERE pricing_id = $1 AND granularity = $2
