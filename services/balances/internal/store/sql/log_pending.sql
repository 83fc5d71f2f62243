-- Whether the observation log holds anything, read before taking the writers' lock so an idle
-- applier does not take it.
SELECT EXISTS (SELECT 1 FROM balances.observation_log)
