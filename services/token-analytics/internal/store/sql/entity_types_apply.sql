-- Records entity types ($1 entity ids, $2 types, $3 entity versions; one row per id): the
-- highest version wins, 0 (publishers that predate versions) applies whatever is stored, and so
-- does a row whose $4 reset is set (a record of version 0 came before it in its batch, so it
-- applies as it would after that one). Returns the ids whose type changed (or is new), whose
-- deposit addresses are then classified again.
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::bool[]) AS t(entity_id, entity_type, version, reset)
), old AS (
    SELECT e.entity_id, e.entity_type FROM market.entity_types e JOIN input i USING (entity_id)
), saved AS (
    INSERT INTO market.entity_types AS e (entity_id, entity_type, version)
    SELECT entity_id, entity_type, version FROM input
    ON CONFLICT (entity_id) DO UPDATE SET entity_type = excluded.entity_type, version = excluded.version
    WHERE (excluded.version >= e.version OR excluded.version = 0
           OR (SELECT i.reset FROM input i WHERE i.entity_id = excluded.entity_id))
      -- a record the row already holds leaves it alone (no dead row per attribution batch)
      AND (e.entity_type, e.version) IS DISTINCT FROM (excluded.entity_type, excluded.version)
    RETURNING e.entity_id, e.entity_type
)
SELECT s.entity_id FROM saved s LEFT JOIN old o USING (entity_id)
WHERE o.entity_type IS DISTINCT FROM s.entity_type
ORDER BY 1
