-- The statistics' live-tuple count of the rollup queue: an estimate that lags by about a second.
SELECT pg_stat_get_live_tuples('transfers.rollup_keys'::regclass)
