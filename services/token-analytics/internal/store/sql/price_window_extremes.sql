-- The highest and lowest stored point (daily and hourly) of the pricing id $1 with
-- $2 < time <= $3, NULLs when there is none: one range read of the primary key per granularity.
SELECT max(price), min(price) FROM market.prices
WHERE pricing_id = $1 AND granularity IN (1, 2) AND time > $2 AND time <= $3
