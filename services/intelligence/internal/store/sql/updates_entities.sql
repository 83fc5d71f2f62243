-- Entity changes after (before, when $6 asks newest first) seq $1, at or after $2 and before or
-- at $3, of status $4 ('' for all), at most $5, with the entity as it is now (null fields when
-- deleted since); $7 entity ids and $8 entity types (null: any) select on the entity as it is now.
SELECT c.seq, c.at, c.status, c.key1, e.name, e.type, e.website, e.twitter, e.linkedin
FROM intel.change_log c
LEFT JOIN intel.entities e ON e.id = c.key1
WHERE c.kind = 'entity' AND (CASE WHEN $6 THEN c.seq < $1 ELSE c.seq > $1 END)
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($7::text[] IS NULL OR c.key1 = ANY($7))
  AND ($8::text[] IS NULL OR e.type = ANY($8))
ORDER BY CASE WHEN $6 THEN -c.seq ELSE c.seq END
LIMIT $5
