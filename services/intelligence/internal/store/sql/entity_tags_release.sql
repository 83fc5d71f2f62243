-- Ends the leases of a round that failed before storing ($1 the entities, $2 the marks, $3 the
-- leases it claimed), so the next round takes its entities again at once. Only rows still
-- carrying the claimed mark and lease: a row marked again or whose lease expired since may be
-- another refresher's lease now. $4 says the round failed whole in a way no entity explained;
-- its rows then count one more round_failures, which orders them after the other dirty entities
-- and, from the second, makes their next round isolate failures (store.RefreshEntityTags). Rows
-- in id order and skipping locked ones, so the release never waits on, nor deadlocks with, a
-- writer or another refresher (a skipped lease expires).
UPDATE intel.entity_tags_dirty d SET claimed_at = NULL, round_failures = d.round_failures + CASE WHEN $4::boolean THEN 1 ELSE 0 END
FROM (SELECT x.entity_id FROM intel.entity_tags_dirty x
      JOIN unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS c(entity_id, mark, claimed_at)
        ON c.entity_id = x.entity_id AND x.mark = c.mark AND x.claimed_at = c.claimed_at
      ORDER BY x.entity_id FOR UPDATE OF x SKIP LOCKED) r
WHERE d.entity_id = r.entity_id
