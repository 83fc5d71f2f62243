-- Drops the change log entries older than $1 seconds (LogRetention) and records the last one
-- dropped, so a cache past it knows it missed entries.
WITH gone AS (DELETE FROM transfers.attribution_changes
    WHERE at < now() - make_interval(secs => $1) RETURNING seq)
UPDATE transfers.attribution_log SET pruned = greatest(pruned, (SELECT max(seq) FROM gone))
WHERE EXISTS (SELECT 1 FROM gone)
