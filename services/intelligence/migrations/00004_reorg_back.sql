-- +goose Up
-- The block journal keeps what it needs to apply a block again and to skip a transfer seen
-- twice:
-- * ids: the transfers' ids, so that a transfer published again at a new offset (an ingest that
--   restarted mid-batch) is not counted twice;
-- * ms: each transfer's time, for the edges' and activity's first and last times when a block
--   is applied again;
-- * orphaned: a reorg no longer deletes an orphaned block's journal but marks it, and the
--   transfers of an orphaned block that arrive later are journaled (not applied): a later reorg
--   can name the block canonical again (the chain went back to it) and applies them.
-- Rows journaled before this migration have no ids or times (ms falls back to newest_ms).
ALTER TABLE intel.block_facts
    ADD COLUMN ids text[] NOT NULL DEFAULT '{}',
    ADD COLUMN ms bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN orphaned boolean NOT NULL DEFAULT false;

-- +goose Down
-- The previous version deleted an orphaned block's journal.
DELETE FROM intel.block_facts WHERE orphaned;
ALTER TABLE intel.block_facts DROP COLUMN ids, DROP COLUMN ms, DROP COLUMN orphaned;
