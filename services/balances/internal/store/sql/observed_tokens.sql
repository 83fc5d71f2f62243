-- Token metadata the appended batch carried ($1 chains, $2 tokens, $3 ids, $4 names, $5 symbols,
-- $6 decimals; each token once, as its newest observation by block carried it).
INSERT INTO balances.observed_tokens AS t (chain, token, token_id, name, symbol, decimals)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[])
ON CONFLICT (chain, token) DO UPDATE
  SET token_id = excluded.token_id, name = excluded.name, symbol = excluded.symbol, decimals = excluded.decimals
  WHERE (t.token_id, t.name, t.symbol, t.decimals) IS DISTINCT FROM
        (excluded.token_id, excluded.name, excluded.symbol, excluded.decimals)
