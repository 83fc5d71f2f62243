-- The user's entities whose name matches (ranked as search_labels.sql), or that hold an address
-- starting with the query (found with the trigram index entity_addresses_search_idx, not by
-- reading every address of every entity); only the first $6 matches found (or offset + limit,
-- when more) are ranked.
WITH c AS (
    SELECT id, seq, name, note, shareable, created_at, updated_at
    FROM userdata.entities e
    WHERE user_id = $1
      AND (lower(name) LIKE '%' || $3 || '%' ESCAPE '\'
           OR id IN (SELECT a.entity_id FROM userdata.entity_addresses a
                     WHERE a.user_id = $1 AND lower(a.address) LIKE $3 || '%' ESCAPE '\'))
    LIMIT greatest($6::bigint, $4::bigint + $5::bigint)
)
SELECT id::text, name, note, shareable, created_at, updated_at
FROM c
ORDER BY CASE WHEN lower(name) = $2 THEN 0 WHEN lower(name) LIKE $3 || '%' ESCAPE '\' THEN 1 ELSE 2 END,
         lower(name), seq
LIMIT $4 OFFSET $5
