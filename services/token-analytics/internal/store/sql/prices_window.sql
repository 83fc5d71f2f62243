-- The points of each pricing id of $1 with $2 <= time <= $3, oldest first, one per time: of two
-- points at the same time the hourly one, as price_in_force.sql takes it. The primary key
-- (pricing_id, granularity, time) serves each id's range.
SELECT DISTINCT ON (pricing_id, time) pricing_id, time, price
FROM market.prices
WHERE pricing_id = ANY($1::text[]) AND granularity IN (1, 2) AND time >= $2 AND time <= $3
ORDER BY pricing_id, time, granularity DESC
