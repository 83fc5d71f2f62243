-- +goose Up
-- The hour close runs beside the transfer writers instead of holding their lock: per chain,
-- closing_until is the end of the hours a close has announced (internal/store/close.go). A
-- writer with a copy in [rolled_until, closing_until) waits for that chain's close
-- (sql/flows_close_lock_shared.sql); writers of later hours do not.
ALTER TABLE market.flow_marks ADD COLUMN closing_until timestamptz NOT NULL DEFAULT '-infinity';
-- Migrations run before a rolling upgrade, so replicas of the previous release run beside this
-- one for a while: they neither take the close lock nor read closing_until, so a copy they store
-- or settle in hours being built would be missing from those hours' flow_address_hours rows.
-- Their transfer batches and reorgs name this column (COPY and flows_insert.sql, flows_settle.sql
-- through flows_keys_blocks.sql); renamed, those statements fail and the messages are retried,
-- uncommitted, by replicas of this release. Readers (top_flow, class changes, the close) do not
-- name it and keep working.
ALTER TABLE market.flows RENAME COLUMN block_hash TO block;

-- +goose Down
ALTER TABLE market.flows RENAME COLUMN block TO block_hash;
ALTER TABLE market.flow_marks DROP COLUMN closing_until;
