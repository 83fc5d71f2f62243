-- The rollup queue's length as the statistics' live-tuple count (an estimate that lags by about a
-- second), except that an empty queue is 0 and a non-empty one at least 1: the estimate can stay
-- a few rows off for good on a quiet chain (a table below its autovacuum threshold is never
-- re-counted), which would show a backlog that does not exist. The queue has no index; finding
-- one row reads at most the dead rows vacuum has not reclaimed yet.
SELECT CASE WHEN EXISTS (SELECT FROM transfers.rollup_keys)
            THEN greatest(pg_stat_get_live_tuples('transfers.rollup_keys'::regclass), 1)
            ELSE 0 END
