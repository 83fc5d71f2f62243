-- The applier's transaction settings, in one round trip.
--
-- synchronous_commit off: the transaction need not wait for its WAL flush. If the server loses
-- the commit, it loses the whole transaction, the move of the applier's mark included, so the
-- next round applies the same observations again (every write is idempotent). Appends keep the
-- flush: the consumer commits its offsets after them.
--
-- work_mem: a round sorts and hashes up to BALANCES_APPLY_BATCH rows (take_observations' rows,
-- set_current's window and DISTINCT ON); at the server's default these spill to temporary files.
--
-- enable_seqscan off until take_observations has run (take_plan_done.sql sets it back): its id
-- range comes from the mark, unknown when planning, and without statistics of the id's
-- correlation (a table not analyzed yet) the planner prices the BRIN scan as the whole table,
-- so it would read every observation instead of the range's pages. jit off with it: the cost
-- that disabling adds to the plan would have it compiled, which takes longer than the round's
-- read.
SELECT set_config('synchronous_commit', 'off', true), set_config('work_mem', '64MB', true),
       set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)
