INSERT INTO balances.market_tokens AS t (pricing_id, name, symbol, tv_ticker)
VALUES ($1, $2, $3, $4)
ON CONFLICT (pricing_id) DO UPDATE SET name = excluded.name, symbol = excluded.symbol, tv_ticker = excluded.tv_ticker
