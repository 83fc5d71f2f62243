-- summarize_ids' lock wait: a vacuum or analyze of observations holds the lock it needs for as
-- long as it runs, and the round would wait behind it (holding the writers' lock once inside
-- its transaction); past this wait the round goes on without a summary.
SELECT set_config('lock_timeout', '50ms', true)
