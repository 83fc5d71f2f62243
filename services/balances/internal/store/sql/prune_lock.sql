-- Claims the pruning pass for this session, or answers false when another session (another
-- replica's pass) holds it. The key is prune_horizon's oid: unique in the database, the same in
-- every replica.
SELECT pg_try_advisory_lock('balances.prune_horizon'::regclass::oid::int, 0)
