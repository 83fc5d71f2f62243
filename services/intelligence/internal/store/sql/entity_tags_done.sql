DELETE FROM intel.entity_tags_dirty WHERE entity_id = ANY($1)
