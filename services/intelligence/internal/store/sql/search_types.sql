-- Entity types containing $2 (as search_entities.sql), the equal one first.
SELECT type FROM (SELECT DISTINCT type FROM intel.entities WHERE type <> '') t
WHERE lower(type) LIKE '%' || $2 || '%' ESCAPE '\'
ORDER BY CASE WHEN lower(type) = $1 THEN 0 WHEN lower(type) LIKE $2 || '%' ESCAPE '\' THEN 1 ELSE 2 END, type
LIMIT $3 OFFSET $4
