-- Moves each chain's pruning horizon to its chain time less the retention ($1, microseconds),
-- never back, and returns the horizons it wrote. Chain time is the newest block time among the
-- chain's current balances (only applied, surviving observations reach current), capped at the
-- server's clock: the horizon follows the chain, not the wall clock, so a chain whose ingest
-- stalls keeps its history, and an observation stamped in the future cannot carry the horizon
-- (which never moves back) past the recent blocks. One scan of current per pass.
INSERT INTO balances.prune_horizon AS p (chain, horizon)
SELECT chain, least(max(block_time), now()) - $1::bigint * interval '1 microsecond' FROM balances.current GROUP BY chain
ON CONFLICT (chain) DO UPDATE SET horizon = greatest(p.horizon, excluded.horizon)
RETURNING chain, horizon
