-- What is known of each (chain, token): the registry's entry, else what observations carried.
SELECT k.chain, k.token, coalesce(d.pricing_id, ''), coalesce(mt.name, ''), coalesce(mt.symbol, ''), coalesce(mt.tv_ticker, ''),
       coalesce(d.decimals, -1), coalesce(o.token_id, ''), coalesce(o.name, ''), coalesce(o.symbol, ''), coalesce(o.decimals, -1)
FROM unnest($1::text[], $2::text[]) AS k(chain, token)
LEFT JOIN balances.deployments d ON d.chain = k.chain AND d.token = k.token
LEFT JOIN balances.market_tokens mt ON mt.pricing_id = d.pricing_id
LEFT JOIN balances.observed_tokens o ON o.chain = k.chain AND o.token = k.token
