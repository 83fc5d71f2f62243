-- The highest and lowest stored price (daily and hourly history) of each pricing id of $1 that
-- has history.
SELECT pricing_id, max(price), min(price) FROM market.prices
WHERE pricing_id = ANY($1)
GROUP BY pricing_id
