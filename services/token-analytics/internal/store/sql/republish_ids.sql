SELECT pricing_id FROM market.tokens ORDER BY pricing_id
