-- The applier's transaction need not wait for its WAL flush: if the server loses the commit, it
-- loses the whole transaction, the move of the applier's mark included, so the next round
-- applies the same observations again (every write is idempotent). Appends keep the flush: the
-- consumer commits its offsets after them.
SET LOCAL synchronous_commit = off
