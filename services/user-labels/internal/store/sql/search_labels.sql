-- The user's labels whose name, or address, matches: exact matches first, then prefixes, then
-- substrings; $2 is the lower-cased query, $3 the same as a LIKE pattern body (escaped). The
-- matches are found with the trigram index labels_search_idx, and only the first $6 found (or
-- offset + limit, when more) are ranked, so a query matching a large part of a big label set
-- reads that many labels, not all of them.
WITH c AS (
    SELECT name, note, address, chain_type
    FROM userdata.labels
    WHERE user_id = $1
      AND (lower(name) LIKE '%' || $3 || '%' ESCAPE '\' OR lower(address) LIKE $3 || '%' ESCAPE '\')
    LIMIT greatest($6::bigint, $4::bigint + $5::bigint)
)
SELECT name, note, address, chain_type
FROM c
ORDER BY CASE WHEN lower(name) = $2 OR lower(address) = $2 THEN 0
              WHEN lower(name) LIKE $3 || '%' ESCAPE '\' OR lower(address) LIKE $3 || '%' ESCAPE '\' THEN 1
              ELSE 2 END,
         lower(name), chain_type, address
LIMIT $4 OFFSET $5
