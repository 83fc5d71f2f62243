-- Tags whose id or label contains $2 (as search_entities.sql), then by rank.
SELECT id, label FROM intel.tags
WHERE lower(id) LIKE '%' || $2 || '%' ESCAPE '\' OR lower(label) LIKE '%' || $2 || '%' ESCAPE '\'
ORDER BY CASE WHEN lower(id) = $1 OR lower(label) = $1 THEN 0
              WHEN lower(id) LIKE $2 || '%' ESCAPE '\' OR lower(label) LIKE $2 || '%' ESCAPE '\' THEN 1
              ELSE 2 END,
         rank, id
LIMIT $3 OFFSET $4
