-- Session settings of a reorg or a group rebuild, and groupLock (7283400111) exclusive: it waits
-- for the writes and applies in flight, and the next ones wait for it.
SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; SELECT pg_advisory_xact_lock(7283400111)
