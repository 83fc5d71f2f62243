-- Ends the leases of a round that failed before storing, so the next round takes its entities
-- again at once.
UPDATE intel.entity_tags_dirty SET claimed_at = NULL WHERE entity_id = ANY($1)
