-- +goose Up
-- Why the brokers refuse an outbox row for good (too large for the topic, an invalid record):
-- the relay parks such a row (sent_at set, so the rows after it flow) with the answer here, and
-- pruning keeps it for an operator (libs/outbox, docs/operations.md "Parked outbox rows").
ALTER TABLE userdata.outbox ADD COLUMN failed text;

-- +goose Down
ALTER TABLE userdata.outbox DROP COLUMN failed;
