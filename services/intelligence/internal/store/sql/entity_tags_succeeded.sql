-- Under the store's transaction: entities of $1 whose tags were computed but that were marked
-- again meanwhile (the rows sql/entity_tags_store.sql left) end their run of consecutive
-- failures, so a later failure is backed off from the first step, not doubled after a success.
-- Rows in id order skipping locked ones (a writer marking one): such a row keeps its count.
UPDATE intel.entity_tags_dirty d SET failures = 0, retry_at = NULL
FROM (SELECT x.entity_id FROM intel.entity_tags_dirty x
      WHERE x.entity_id = ANY($1::text[]) AND x.failures > 0
      ORDER BY x.entity_id FOR UPDATE OF x SKIP LOCKED) r
WHERE d.entity_id = r.entity_id
