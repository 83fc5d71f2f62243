-- The price in force at $2 of each pricing id: its newest point at or before $2.
SELECT id, p.time, p.price
FROM unnest($1::text[]) AS id
CROSS JOIN LATERAL (
  SELECT time, price FROM balances.prices WHERE pricing_id = id AND time <= $2 ORDER BY time DESC LIMIT 1
) p
