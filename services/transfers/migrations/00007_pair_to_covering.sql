-- +goose Up
-- Reads of an address's incoming pair rows (its counterparties, flow and histograms by recipient)
-- went through pair_hourly_to to heap rows scattered over the table (the rows are stored in
-- sender order): a busy address's incoming pair rows cost about a heap page each. The index
-- now carries every column those reads use, so they are index-only scans. Updates of a pair row's sums were rare already (about one in a thousand
-- writes in the simulated world) and are no longer HOT.
DROP INDEX transfers.pair_hourly_to;
CREATE INDEX pair_hourly_to ON transfers.pair_hourly (to_addr, from_addr, bucket) INCLUDE (chain, token, token_id, n, usd, value);

-- +goose Down
DROP INDEX transfers.pair_hourly_to;
CREATE INDEX pair_hourly_to ON transfers.pair_hourly (to_addr, from_addr, bucket);
