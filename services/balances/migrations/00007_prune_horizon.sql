-- +goose Up
-- The observation pruner's horizon per chain (store.PrunePass, sql/prune_*.sql): observations
-- before it are pruned down to what a rule can still read (each key's newest surviving one
-- before it, and every one after it). It only moves forward, so the kept rows always cover the
-- newest horizon any pass used; a reorg older than it finds only the kept rows (docs/balances.md,
-- Storage).
--
-- Rolling upgrade: a new table, nothing else changes. Pods of the previous release neither read
-- nor write it and keep appending and applying as before; the pruner of a new pod deletes only
-- rows below the applier's mark, which the previous applier never reads again either.
--
-- pruned_block is the newest block number of an observation the pruner deleted (0: none yet),
-- raised by every pruning statement (prune_observations.sql). A reorg compares the lowest block
-- it changes against it (store.ApplyReorg, ReorgResult.PastPruned): a reorg reaching blocks whose
-- observations were all pruned finds no rows of them, and would otherwise not know it reached
-- pruned history.
CREATE TABLE balances.prune_horizon (
  chain        text PRIMARY KEY,
  horizon      timestamptz NOT NULL,
  pruned_block bigint NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE balances.prune_horizon;
