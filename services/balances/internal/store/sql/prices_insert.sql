INSERT INTO balances.prices AS p (pricing_id, time, price)
SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::float8[])
ON CONFLICT (pricing_id, time) DO UPDATE SET price = excluded.price
