-- Entity changes after seq $1, at or after $2 and before or at $3, of status $4 ('' for all),
-- at most $5, with the entity as it is now (null fields when deleted since).
SELECT c.seq, c.at, c.status, c.key1, e.name, e.type, e.website, e.twitter, e.linkedin
FROM intel.change_log c
LEFT JOIN intel.entities e ON e.id = c.key1
WHERE c.kind = 'entity' AND c.seq > $1 AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
ORDER BY c.seq
LIMIT $5
