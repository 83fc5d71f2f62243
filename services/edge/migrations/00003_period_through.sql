-- +goose Up
-- The latest call time (ms since the epoch) among the calls a billing period counts, kept with
-- credits_used in the same transaction: the live ledger's copy in Redis takes both from one
-- snapshot, so a call later than "through" is never in "used".
ALTER TABLE edge.credit_periods ADD COLUMN through_ms bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE edge.credit_periods DROP COLUMN through_ms;
