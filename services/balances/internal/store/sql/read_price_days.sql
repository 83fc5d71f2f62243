-- Daily closes of each pricing id from day $2 to day $3, and the last close before $2.
SELECT id, d.day, d.price
FROM unnest($1::text[]) AS id
CROSS JOIN LATERAL (
  (SELECT day, price FROM balances.price_days WHERE pricing_id = id AND day < $2::date ORDER BY day DESC LIMIT 1)
  UNION ALL
  (SELECT day, price FROM balances.price_days WHERE pricing_id = id AND day >= $2::date AND day <= $3::date)
) d
