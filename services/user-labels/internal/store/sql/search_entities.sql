-- The user's entities whose name matches (ranked as search_labels.sql), or that hold an address
-- starting with the query.
SELECT id::text, name, note, shareable, created_at, updated_at
FROM userdata.entities e
WHERE user_id = $1
  AND (lower(name) LIKE '%' || $3 || '%' ESCAPE '\'
       OR EXISTS (SELECT 1 FROM userdata.entity_addresses a
                  WHERE a.entity_id = e.id AND lower(a.address) LIKE $3 || '%' ESCAPE '\'))
ORDER BY CASE WHEN lower(name) = $2 THEN 0 WHEN lower(name) LIKE $3 || '%' ESCAPE '\' THEN 1 ELSE 2 END,
         lower(name), seq
LIMIT $4 OFFSET $5
