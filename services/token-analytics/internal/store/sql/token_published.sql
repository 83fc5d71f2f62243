UPDATE market.tokens SET published = $2 WHERE pricing_id = $1
