-- Leaves entities whose recomputation or store failed ($1 the entities, $2 the marks, $3 the
-- leases claimed) to a later round: ends the lease and sets retry_at after a backoff of $4
-- seconds doubled for each earlier consecutive failure, at most $5 seconds, so the claim skips
-- them meanwhile and the other dirty entities go on. Rows still carrying the claimed mark and
-- lease, and rows marked again since (claimed_at NULL) that no refresher backed off since this
-- claim (retry_at, which a backoff sets after now(), is still at most the claim's lease): an
-- entity marked again while each attempt runs is still backed off, and recomputed from its
-- newest state when the backoff ends, while a slow refresher whose lease expired does not count
-- a failure again that the refresher which took the entity over already counted. A row claimed
-- by another refresher is that one's to store or back off. In id order skipping locked ones,
-- like sql/entity_tags_release.sql. Returns each entity's failures so far and backoff in
-- seconds.
UPDATE intel.entity_tags_dirty d
SET failures = d.failures + 1, claimed_at = NULL,
    retry_at = now() + make_interval(secs => least($4::float8 * 2 ^ least(d.failures, 30), $5::float8))
FROM (SELECT x.entity_id FROM intel.entity_tags_dirty x
      JOIN unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS c(entity_id, mark, claimed_at) ON c.entity_id = x.entity_id
      WHERE (x.mark = c.mark AND x.claimed_at = c.claimed_at)
         OR (x.mark <> c.mark AND x.claimed_at IS NULL AND (x.retry_at IS NULL OR x.retry_at <= c.claimed_at))
      ORDER BY x.entity_id FOR UPDATE OF x SKIP LOCKED) r
WHERE d.entity_id = r.entity_id
RETURNING d.entity_id, d.failures, least($4::float8 * 2 ^ (d.failures - 1), $5::float8)
