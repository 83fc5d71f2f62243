-- The highest and lowest stored price (daily and hourly history) of each pricing id of $1 that
-- has history: one primary-key lookup per id (the write path keeps the table).
SELECT pricing_id, high, low FROM market.price_extremes
WHERE pricing_id = ANY($1)
