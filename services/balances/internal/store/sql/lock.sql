-- Every writer of balances, snapshots and memberships holds this lock for its transaction, so a
-- relabel, a reorg and a batch of observations never interleave.
SELECT pg_advisory_xact_lock(hashtext('chainintel.balances.writer'))
