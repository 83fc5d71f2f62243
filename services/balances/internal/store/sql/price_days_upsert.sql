-- The last point of each day is its close.
INSERT INTO balances.price_days AS p (pricing_id, day, time, price)
SELECT id, (t AT TIME ZONE 'UTC')::date, t, price
FROM unnest($1::text[], $2::timestamptz[], $3::float8[]) AS x(id, t, price)
ON CONFLICT (pricing_id, day) DO UPDATE SET time = excluded.time, price = excluded.price
  WHERE excluded.time >= p.time
