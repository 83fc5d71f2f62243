-- +goose Up
-- Per token (chain + contract) per UTC day: the sums of its flow_hours rows of that day, kept in
-- the same statements that write flow_hours, so /token/top and day-sized /token/volume buckets
-- read one row per token-day instead of 24.
CREATE TABLE market.flow_days (
    chain        text NOT NULL,
    token        text NOT NULL,
    day          timestamptz NOT NULL,
    transfers    bigint NOT NULL DEFAULT 0,
    volume_usd   double precision NOT NULL DEFAULT 0,
    volume_value double precision NOT NULL DEFAULT 0,
    cex_in_usd   double precision NOT NULL DEFAULT 0,
    cex_out_usd  double precision NOT NULL DEFAULT 0,
    dex_in_usd   double precision NOT NULL DEFAULT 0,
    dex_out_usd  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, token, day)
);
INSERT INTO market.flow_days (chain, token, day, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
SELECT chain, token, date_bin('1 day', hour, TIMESTAMPTZ '2000-01-03 00:00:00+00'),
       sum(transfers), sum(volume_usd), sum(volume_value), sum(cex_in_usd), sum(cex_out_usd), sum(dex_in_usd), sum(dex_out_usd)
FROM market.flow_hours
GROUP BY 1, 2, 3;

-- +goose Down
DROP TABLE market.flow_days;
