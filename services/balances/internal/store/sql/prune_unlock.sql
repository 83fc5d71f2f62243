-- Gives the pruning pass's claim (prune_lock.sql) back; false if this session did not hold it.
SELECT pg_advisory_unlock('balances.prune_horizon'::regclass::oid::int, 0)
