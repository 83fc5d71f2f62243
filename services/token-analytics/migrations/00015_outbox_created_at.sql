-- +goose Up
-- When each outbox row was written, so the relay can export the age of the oldest unsent one
-- (outbox_oldest_pending_age_seconds, libs/outbox). A constant default: rows already there get
-- the migration's time, and the table is not rewritten.
ALTER TABLE market.outbox ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();

-- +goose Down
ALTER TABLE market.outbox DROP COLUMN created_at;
