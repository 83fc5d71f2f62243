-- What is known of each (chain, token) an operator entity's changes on chains $2 name (as
-- read_token_meta).
SELECT k.chain, k.token, coalesce(d.pricing_id, ''), coalesce(mt.name, ''), coalesce(mt.symbol, ''), coalesce(mt.tv_ticker, ''),
       coalesce(d.decimals, -1), coalesce(o.token_id, ''), coalesce(o.name, ''), coalesce(o.symbol, ''), coalesce(o.decimals, -1)
FROM (
  SELECT DISTINCT chain, token FROM balances.entity_change
  WHERE entity_id = $1 AND chain = ANY($2::text[]) AND delta <> 0
) k
LEFT JOIN balances.deployments d ON d.chain = k.chain AND d.token = k.token
LEFT JOIN balances.market_tokens mt ON mt.pricing_id = d.pricing_id
LEFT JOIN balances.observed_tokens o ON o.chain = k.chain AND o.token = k.token
