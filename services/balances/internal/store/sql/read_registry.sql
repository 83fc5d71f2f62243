SELECT mt.name, mt.symbol, mt.tv_ticker, d.chain, d.token, d.decimals
FROM balances.market_tokens mt
LEFT JOIN balances.deployments d ON d.pricing_id = mt.pricing_id
WHERE mt.pricing_id = $1
