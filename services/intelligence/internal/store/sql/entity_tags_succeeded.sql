-- Under the store's transaction: entities of $1 (with $2 the leases claimed) whose tags were
-- computed but that were marked again meanwhile (the rows sql/entity_tags_store.sql left) end
-- their runs of consecutive failures, so a later failure is backed off from the first step, not
-- doubled after a success, and a later whole-round failure does not make their round isolate.
-- Only failures counted before this claim (retry_at at most the lease; a backoff sets it after
-- now()): a slow refresher's success does not erase the failure of a refresher that took the
-- entity over since. Rows in id order skipping locked ones (a writer marking one): such a row
-- keeps its counts.
UPDATE intel.entity_tags_dirty d SET failures = 0, retry_at = NULL, round_failures = 0
FROM (SELECT x.entity_id FROM intel.entity_tags_dirty x
      JOIN unnest($1::text[], $2::timestamptz[]) AS c(entity_id, claimed_at) ON c.entity_id = x.entity_id
      WHERE (x.failures > 0 OR x.round_failures > 0) AND (x.retry_at IS NULL OR x.retry_at <= c.claimed_at)
      ORDER BY x.entity_id FOR UPDATE OF x SKIP LOCKED) r
WHERE d.entity_id = r.entity_id
