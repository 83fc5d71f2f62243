-- Records entity types ($1 entity ids, $2 types, $3 entity versions; one row per id): the
-- highest version wins, 0 (publishers that predate versions) applies whatever is stored. Returns
-- the ids whose type changed (or is new), whose deposit addresses are then classified again.
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int8[]) AS t(entity_id, entity_type, version)
), old AS (
    SELECT e.entity_id, e.entity_type FROM market.entity_types e JOIN input i USING (entity_id)
), saved AS (
    INSERT INTO market.entity_types AS e (entity_id, entity_type, version)
    SELECT entity_id, entity_type, version FROM input
    ON CONFLICT (entity_id) DO UPDATE SET entity_type = excluded.entity_type, version = excluded.version
    WHERE excluded.version >= e.version OR excluded.version = 0
    RETURNING e.entity_id, e.entity_type
)
SELECT s.entity_id FROM saved s LEFT JOIN old o USING (entity_id)
WHERE o.entity_type IS DISTINCT FROM s.entity_type
ORDER BY 1
