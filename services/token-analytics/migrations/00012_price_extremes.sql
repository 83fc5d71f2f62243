-- +goose Up
-- The highest and lowest stored history price (daily and hourly points) of each pricing id with
-- history, kept by the price write path (Store.AddPrices) in the transaction of each change, so
-- /token/trending reads one row per token instead of every point of its history. Backfilled
-- from the history stored so far.
CREATE TABLE market.price_extremes (
    pricing_id text PRIMARY KEY,
    high       double precision NOT NULL,
    low        double precision NOT NULL
);
INSERT INTO market.price_extremes (pricing_id, high, low)
SELECT pricing_id, max(price), min(price) FROM market.prices GROUP BY pricing_id;

-- +goose Down
DROP TABLE market.price_extremes;
