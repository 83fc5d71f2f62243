-- Records a pricing id's newest price (and market cap, 24 h volume) unless a newer one is stored.
UPDATE market.tokens SET price = $2, price_time = $3,
    market_cap = coalesce($4, market_cap), volume_24h = coalesce($5, volume_24h)
WHERE pricing_id = $1 AND (price_time IS NULL OR price_time <= $3)
