-- Merges one registry entry: empty text and NULLs keep what is stored.
INSERT INTO market.tokens AS t (pricing_id, name, symbol, tv_ticker, stablecoin, circulating_supply, total_supply,
                                market_cap, all_time_high, all_time_low, volume_24h, wrapped)
VALUES ($1, $2, $3, $4, coalesce($5, false), $6, $7, $8, $9, $10, $11, coalesce($12, false))
ON CONFLICT (pricing_id) DO UPDATE SET
    name = CASE WHEN excluded.name <> '' THEN excluded.name ELSE t.name END,
    symbol = CASE WHEN excluded.symbol <> '' THEN excluded.symbol ELSE t.symbol END,
    tv_ticker = CASE WHEN excluded.tv_ticker <> '' THEN excluded.tv_ticker ELSE t.tv_ticker END,
    stablecoin = coalesce($5, t.stablecoin),
    wrapped = coalesce($12, t.wrapped),
    circulating_supply = coalesce(excluded.circulating_supply, t.circulating_supply),
    total_supply = coalesce(excluded.total_supply, t.total_supply),
    market_cap = coalesce(excluded.market_cap, t.market_cap),
    all_time_high = coalesce(excluded.all_time_high, t.all_time_high),
    all_time_low = coalesce(excluded.all_time_low, t.all_time_low),
    volume_24h = coalesce(excluded.volume_24h, t.volume_24h),
    updated_at = now()
