-- +goose Up
-- Whole-round failures of the entity tags refresher (store.RefreshEntityTags, docs/intelligence.md
-- "Entity tags"). round_failures counts the consecutive rounds holding the entity that failed
-- whole (a timeout, lock or serialization failure no single entity explained), which back off
-- none of their entities. The claim takes rows with fewer such failures first, so rounds that
-- keep failing do not hold back the other dirty entities, and a round holding an entity whose
-- rounds failed whole twice isolates its failures down to single entities instead of failing
-- whole again (two entities that each time out, one in each half, would fail every round).
-- A successful store deletes the row; a success on an entity marked again resets the count.
ALTER TABLE intel.entity_tags_dirty ADD COLUMN round_failures integer NOT NULL DEFAULT 0;
CREATE INDEX entity_tags_dirty_claim ON intel.entity_tags_dirty (round_failures, entity_id);

-- +goose Down
DROP INDEX intel.entity_tags_dirty_claim;
ALTER TABLE intel.entity_tags_dirty DROP COLUMN round_failures;
