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
CREATE TABLE balances.prune_horizon (
  chain   text PRIMARY KEY,
  horizon timestamptz NOT NULL
);

-- +goose Down
DROP TABLE balances.prune_horizon;
