INSERT INTO balances.observed_tokens AS t (chain, token, token_id, name, symbol, decimals)
SELECT DISTINCT ON (chain, token) chain, token, token_id, token_name, token_symbol, token_decimals
FROM stage_obs WHERE token <> ''
ORDER BY chain, token, block_number DESC
ON CONFLICT (chain, token) DO UPDATE
  SET token_id = excluded.token_id, name = excluded.name, symbol = excluded.symbol, decimals = excluded.decimals
  WHERE (t.token_id, t.name, t.symbol, t.decimals) IS DISTINCT FROM
        (excluded.token_id, excluded.name, excluded.symbol, excluded.decimals)
