-- Tokens by ticker, name or pricing id containing $2 (as search_entities.sql) or a contract
-- address starting with it: the registry's tokens (pricing id set), and tokens seen on chain
-- that the registry does not list (pricing id empty, with their chain and address). Ticker
-- matches rank first among equals.
SELECT pricing_id, chain, address, name, symbol, decimals FROM (
    SELECT m.pricing_id, '' AS chain, '' AS address, m.name, m.symbol, 0 AS decimals,
           CASE WHEN lower(m.symbol) = $1 THEN 0 WHEN lower(m.pricing_id) = $1 OR lower(m.name) = $1 THEN 1
                WHEN lower(m.symbol) LIKE $2 || '%' ESCAPE '\' OR lower(m.name) LIKE $2 || '%' ESCAPE '\'
                  OR lower(m.pricing_id) LIKE $2 || '%' ESCAPE '\' THEN 2
                ELSE 3 END AS how
    FROM intel.market_tokens m
    WHERE lower(m.symbol) LIKE '%' || $2 || '%' ESCAPE '\' OR lower(m.name) LIKE '%' || $2 || '%' ESCAPE '\'
       OR lower(m.pricing_id) LIKE '%' || $2 || '%' ESCAPE '\'
       OR EXISTS (SELECT 1 FROM intel.token_deployments d
                  WHERE d.pricing_id = m.pricing_id AND d.address <> '' AND d.address LIKE $2 || '%' ESCAPE '\')
    UNION ALL
    SELECT '', t.chain, t.address, t.name, t.symbol, t.decimals,
           CASE WHEN lower(t.symbol) = $1 OR t.address = $1 THEN 0 WHEN lower(t.name) = $1 THEN 1
                WHEN lower(t.symbol) LIKE $2 || '%' ESCAPE '\' OR lower(t.name) LIKE $2 || '%' ESCAPE '\' THEN 2
                ELSE 3 END
    FROM intel.tokens t
    WHERE NOT EXISTS (SELECT 1 FROM intel.token_deployments d WHERE d.chain = t.chain AND d.address = t.address)
      AND (lower(t.symbol) LIKE '%' || $2 || '%' ESCAPE '\' OR lower(t.name) LIKE '%' || $2 || '%' ESCAPE '\'
           OR t.address LIKE $2 || '%' ESCAPE '\')
) found
ORDER BY how, lower(symbol), pricing_id, chain, address
LIMIT $3 OFFSET $4
