-- Claims up to $1 dirty entities for one refresh round: leases their rows (claimed_at) and
-- returns each one's mark. Rows another refresher leased less than $2 seconds ago are left to
-- it (a lease outlives a round; one a refresher died holding expires), and rows whose last
-- recomputation failed until their retry_at (sql/entity_tags_backoff.sql); SKIP LOCKED leaves
-- rows a writer is marking to a later round. The rows are not kept locked: the refresher
-- computes without blocking writers and stores only what no mark overtook
-- (sql/entity_tags_store.sql).
UPDATE intel.entity_tags_dirty d SET claimed_at = now()
FROM (SELECT entity_id FROM intel.entity_tags_dirty
      WHERE (claimed_at IS NULL OR claimed_at < now() - make_interval(secs => $2))
        AND (retry_at IS NULL OR retry_at <= now())
      ORDER BY entity_id LIMIT $1 FOR UPDATE SKIP LOCKED) c
WHERE d.entity_id = c.entity_id
RETURNING d.entity_id, d.mark
