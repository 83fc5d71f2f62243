-- Under the version lock: for each claimed entity ($1 ids, $2 the marks claimed, $3 the tags
-- computed since), deletes its dirty row only if it still carries the claimed mark, and then
-- stores the tags with a new details version when they differ from the stored ones. An entity
-- marked again since its claim (a change the computation may have missed) keeps its row, with
-- the new mark, and its stored tags: a later round recomputes it. Returns the entities done,
-- whether they were marked for republication and whether their tags changed.
WITH c AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) AS c(id, mark, tags)),
done AS (
    DELETE FROM intel.entity_tags_dirty d USING c
    WHERE d.entity_id = c.id AND d.mark = c.mark
    RETURNING d.entity_id, d.republish, c.tags::jsonb AS tags),
changed AS (
    UPDATE intel.entities e SET populated_tags = done.tags, version = nextval('intel.attribution_version'), updated_at = now()
    FROM done
    WHERE e.id = done.entity_id AND e.populated_tags IS DISTINCT FROM done.tags
    RETURNING e.id)
SELECT done.entity_id, done.republish, changed.id IS NOT NULL
FROM done LEFT JOIN changed ON changed.id = done.entity_id
ORDER BY done.entity_id
