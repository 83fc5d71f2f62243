-- Entity changes after seq $1, oldest first (updates_entities_desc.sql: before it, newest first),
-- at or after $2 and before or at $3, of status $4 ('' for all), at most $5, with the entity as
-- it is now (null fields when deleted since); $6 entity ids and $7 entity types (null: any)
-- select on the entity as it is now. One statement per direction, so either is a range scan of
-- change_log (kind, seq) that stops after $5 rows.
SELECT c.seq, c.at, c.status, c.key1, e.name, e.type, e.website, e.twitter, e.linkedin
FROM intel.change_log c
LEFT JOIN intel.entities e ON e.id = c.key1
WHERE c.kind = 'entity' AND c.seq > $1
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($6::text[] IS NULL OR c.key1 = ANY($6))
  AND ($7::text[] IS NULL OR e.type = ANY($7))
ORDER BY c.seq
LIMIT $5
