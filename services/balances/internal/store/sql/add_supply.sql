INSERT INTO balances.token_supply AS t (chain, token, supply)
SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[])
ON CONFLICT (chain, token) DO UPDATE SET supply = t.supply + excluded.supply
