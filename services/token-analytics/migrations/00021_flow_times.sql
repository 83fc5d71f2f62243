-- +goose Up
-- Each transfer copy's block time, so top_flow and volume count exactly the transfers from
-- now - timeLast on in the window's first, partial hour (the rollups are per hour). Nullable and
-- without a default, so adding it rewrites nothing: rows stored before this migration, and rows
-- replicas of the previous release store during a rolling upgrade (their COPY and insert name
-- the columns they know), have none and are read as at their hour's start
-- (docs/token-analytics.md, "Query plans").
ALTER TABLE market.flows ADD COLUMN block_time timestamptz;

-- +goose Down
ALTER TABLE market.flows DROP COLUMN block_time;
