-- +goose Up
-- The newest block number of an observation the pruner deleted, per chain (0: none yet), raised
-- by every pruning statement (prune_observations.sql). A reorg compares the lowest block it
-- changes against it (store.ApplyReorg, ReorgResult.PastPruned): a reorg reaching blocks whose
-- observations were all pruned finds no rows of them, and would otherwise not know it reached
-- pruned history.
--
-- Rolling upgrade: a column with a constant default (no table rewrite, a moment's lock on a
-- table of one row per chain). Pods of the previous release name prune_horizon's columns
-- (chain, horizon) and keep working; their passes do not raise pruned_block, so until they are
-- gone a reorg into blocks only they pruned is warned about by its rows alone, as before. They
-- also do not take the new pass claim (prune_lock.sql): their passes may run beside a new pod's,
-- which is safe (each row is deleted once), as it always was.
ALTER TABLE balances.prune_horizon ADD COLUMN pruned_block bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE balances.prune_horizon DROP COLUMN pruned_block;
