INSERT INTO balances.entity_change AS e (entity_id, chain, token, day, delta)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::numeric[])
ON CONFLICT (entity_id, chain, token, day) DO UPDATE SET delta = e.delta + excluded.delta
