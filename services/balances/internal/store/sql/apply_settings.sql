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
-- jit off: a round's statements over thousands of rows are costed above jit_above_cost, and
-- compiling them takes longer than running them (docs/balances.md, Consumers).
SELECT set_config('synchronous_commit', 'off', true), set_config('work_mem', '64MB', true),
       set_config('jit', 'off', true)
