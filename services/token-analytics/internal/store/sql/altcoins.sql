-- The largest tokens other than $1 (Bitcoin) by market cap with a price now, neither stablecoins
-- nor wrapped or bridged copies of another coin.
SELECT t.pricing_id, t.price FROM market.tokens t
WHERE NOT t.stablecoin AND NOT t.wrapped AND t.pricing_id <> $1 AND t.market_cap IS NOT NULL AND t.price IS NOT NULL
ORDER BY t.market_cap DESC, t.pricing_id
LIMIT $2
