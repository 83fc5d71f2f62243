-- +goose Up
-- The hour close runs beside the transfer writers instead of holding their lock: per chain,
-- closing_until is the end of the hours a close has announced (internal/store/close.go). A
-- writer with a copy in [rolled_until, closing_until) waits for that chain's close
-- (sql/flows_close_lock_shared.sql); writers of later hours do not.
ALTER TABLE market.flow_marks ADD COLUMN closing_until timestamptz NOT NULL DEFAULT '-infinity';

-- +goose Down
ALTER TABLE market.flow_marks DROP COLUMN closing_until;
