-- The pruning horizon of chain $1 and the newest block number the pruner deleted an observation
-- of (no row: nothing of it was pruned).
SELECT horizon, pruned_block FROM balances.prune_horizon WHERE chain = $1
