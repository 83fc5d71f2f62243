INSERT INTO balances.entity_current AS e (entity_id, chain, token, balance)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[])
ON CONFLICT (entity_id, chain, token) DO UPDATE SET balance = e.balance + excluded.balance
