-- +goose Up
-- The latest call time (ms since the epoch) among the calls a billing period counts, kept with
-- credits_used in the same transaction: the live ledger's copy in Redis takes both from one
-- snapshot, so a call later than "through" is never in "used".
ALTER TABLE edge.credit_periods ADD COLUMN through_ms bigint NOT NULL DEFAULT 0;

-- Periods counted before the column existed: their calls' times are not kept, but each was
-- counted by the transaction that last wrote the row, at computed_at, so none is later than it
-- (nor than the period's end). A "through" of 0 beside a credits_used above 0 would say the
-- total includes no call, and a replica seeding from it would count its own published calls on
-- top of a total that already has them until a newer call is counted.
UPDATE edge.credit_periods
SET through_ms = floor(extract(epoch FROM LEAST(computed_at, period_end - interval '1 millisecond')) * 1000)::bigint
WHERE through_ms = 0 AND credits_used > 0;

-- +goose Down
ALTER TABLE edge.credit_periods DROP COLUMN through_ms;
