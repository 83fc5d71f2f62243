-- Leaves entities whose recomputation or store failed ($1 the entities, $2 the marks claimed) to a
-- later round: ends the lease and sets retry_at after a backoff of $3 seconds doubled for each
-- earlier consecutive failure, at most $4 seconds, so the claim skips them meanwhile and the
-- other dirty entities go on. Rows still carrying the claimed mark, and rows marked again since
-- that no refresher has claimed (claimed_at NULL): an entity marked again while each attempt
-- runs is still backed off, and recomputed from its newest state when the backoff ends. A row
-- marked again and claimed by another refresher is that one's to store or back off. In id
-- order skipping locked ones, like sql/entity_tags_release.sql. Returns each entity's failures
-- so far and backoff in seconds.
UPDATE intel.entity_tags_dirty d
SET failures = d.failures + 1, claimed_at = NULL,
    retry_at = now() + make_interval(secs => least($3::float8 * 2 ^ least(d.failures, 30), $4::float8))
FROM (SELECT x.entity_id FROM intel.entity_tags_dirty x
      JOIN unnest($1::text[], $2::bigint[]) AS c(entity_id, mark) ON c.entity_id = x.entity_id
      WHERE x.mark = c.mark OR x.claimed_at IS NULL
      ORDER BY x.entity_id FOR UPDATE OF x SKIP LOCKED) r
WHERE d.entity_id = r.entity_id
RETURNING d.entity_id, d.failures, least($3::float8 * 2 ^ (d.failures - 1), $4::float8)
