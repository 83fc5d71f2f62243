-- The applier's transaction need not wait for its WAL flush: if the server loses the commit, it
-- loses the whole transaction, the rows taken from the log included, so the next round applies
-- them again (every write is idempotent). A direct write keeps the flush: its caller commits
-- offsets after it.
SET LOCAL synchronous_commit = off
