-- Registry entries with their deployments (on the chains $2, or all when NULL).
SELECT t.pricing_id, t.name, t.symbol, t.tv_ticker, t.stablecoin, t.circulating_supply, t.total_supply, t.market_cap,
       t.all_time_high, t.all_time_low, t.price, t.price_time, t.volume_24h, t.published,
       coalesce((SELECT json_agg(json_build_object('chain', d.chain, 'address', d.address, 'decimals', d.decimals)
                                ORDER BY d.chain, d.address)
                 FROM market.deployments d
                 WHERE d.pricing_id = t.pricing_id AND ($2::text[] IS NULL OR d.chain = ANY($2))), '[]')
FROM market.tokens t
WHERE t.pricing_id = ANY($1)
ORDER BY t.pricing_id
