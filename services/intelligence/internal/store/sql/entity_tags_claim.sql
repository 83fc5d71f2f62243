-- Claims up to $1 dirty entities for one refresh round: leases their rows (claimed_at, which is
-- also the lease's token: later statements of the round act only on rows still carrying it) and
-- returns each one's mark, lease and whole-round failures. Rows another refresher leased less
-- than $2 seconds ago are left to it (a lease outlives a round; one a refresher died holding
-- expires), and rows whose last recomputation failed until their retry_at
-- (sql/entity_tags_backoff.sql); SKIP LOCKED leaves rows a writer is marking to a later round.
-- Rows whose rounds failed whole fewer times come first (round_failures, then id order), so a
-- round that keeps failing does not hold back the other dirty entities. The rows are not kept
-- locked: the refresher computes without blocking writers and stores only what no mark
-- overtook (sql/entity_tags_store.sql).
UPDATE intel.entity_tags_dirty d SET claimed_at = now()
FROM (SELECT entity_id FROM intel.entity_tags_dirty
      WHERE (claimed_at IS NULL OR claimed_at < now() - make_interval(secs => $2))
        AND (retry_at IS NULL OR retry_at <= now())
      ORDER BY round_failures, entity_id LIMIT $1 FOR UPDATE SKIP LOCKED) c
WHERE d.entity_id = c.entity_id
RETURNING d.entity_id, d.mark, d.claimed_at, d.round_failures
