-- Serialises the writes of user $1's additions to operator entity $2 until the transaction
-- ends: there is no row of the operator entity here to lock, so a transaction-scoped advisory
-- lock on the pair stands for it.
SELECT pg_advisory_xact_lock(hashtextextended('userdata.operator_additions:' || $1 || '/' || $2, 0))
