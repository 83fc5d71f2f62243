-- Ends the leases of a round that failed before storing ($1 the entities, $2 the marks it
-- claimed), so the next round takes its entities again at once. Only rows still carrying the
-- claimed mark: a row marked again since may be another refresher's lease now. Rows in id
-- order and skipping locked ones, so the release never waits on, nor deadlocks with, a writer
-- or another refresher (a skipped lease expires).
UPDATE intel.entity_tags_dirty d SET claimed_at = NULL
FROM (SELECT x.entity_id FROM intel.entity_tags_dirty x
      JOIN unnest($1::text[], $2::bigint[]) AS c(entity_id, mark) ON c.entity_id = x.entity_id AND x.mark = c.mark
      ORDER BY x.entity_id FOR UPDATE OF x SKIP LOCKED) r
WHERE d.entity_id = r.entity_id
