-- Price and registry writers share this lock; a republish takes it alone, so a point or an entry
-- changed while it reads is enqueued after the republished copy, never before it.
SELECT pg_advisory_xact_lock_shared(hashtext('market.prices'))
