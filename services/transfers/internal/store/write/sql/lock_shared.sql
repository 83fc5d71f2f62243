-- Session settings of a write or a rollup apply (a few hundred thousand rows sorted and hashed in
-- memory, no JIT), and groupLock (7283400111) shared: writers and applies run beside each other,
-- not beside a reorg or a relabel.
SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; SELECT pg_advisory_xact_lock_shared(7283400111)
