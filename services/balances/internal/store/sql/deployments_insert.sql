-- A deployment another registry entry claimed moves to this one (the registry's newest word).
INSERT INTO balances.deployments AS d (chain, token, pricing_id, decimals)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])
ON CONFLICT (chain, token) DO UPDATE SET pricing_id = excluded.pricing_id, decimals = excluded.decimals
