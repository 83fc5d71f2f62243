DELETE FROM balances.market_tokens WHERE pricing_id = $1
