-- The user's labels whose name, or address, matches: exact matches first, then prefixes, then
-- substrings; $2 is the lower-cased query, $3 the same as a LIKE pattern body (escaped).
SELECT name, note, address, chain_type
FROM userdata.labels
WHERE user_id = $1
  AND (lower(name) LIKE '%' || $3 || '%' ESCAPE '\' OR lower(address) LIKE $3 || '%' ESCAPE '\')
ORDER BY CASE WHEN lower(name) = $2 OR lower(address) = $2 THEN 0
              WHEN lower(name) LIKE $3 || '%' ESCAPE '\' OR lower(address) LIKE $3 || '%' ESCAPE '\' THEN 1
              ELSE 2 END,
         lower(name), chain_type, address
LIMIT $4 OFFSET $5
