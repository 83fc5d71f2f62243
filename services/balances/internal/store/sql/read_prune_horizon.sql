-- The pruning horizon of chain $1 (no row: nothing of it was pruned).
SELECT horizon FROM balances.prune_horizon WHERE chain = $1
