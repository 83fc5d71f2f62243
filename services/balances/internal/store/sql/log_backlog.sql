-- Observations appended and not applied yet.
SELECT count(*) FROM balances.observation_log
