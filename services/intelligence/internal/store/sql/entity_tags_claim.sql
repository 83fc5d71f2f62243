-- The entities whose populated tags a refresh round recomputes. SKIP LOCKED: a row a writer is
-- marking (or another refresher holds) waits for a later round.
SELECT entity_id, republish FROM intel.entity_tags_dirty ORDER BY entity_id LIMIT $1 FOR UPDATE SKIP LOCKED
