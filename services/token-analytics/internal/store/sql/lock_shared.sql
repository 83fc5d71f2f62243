-- Transfer writers share this lock; a class change takes it alone, so a transfer is never
-- classified by a class that changes before it commits.
SELECT pg_advisory_xact_lock_shared(hashtext('market.flow_hours'))
