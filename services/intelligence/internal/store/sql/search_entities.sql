-- Operator entities whose id or name contains $2 (a lower-cased LIKE body, escaped with '\'):
-- equal to the query ($1) first, then starting with it, then containing it; then by name.
SELECT id, name, type, note, description, website, twitter, linkedin, service, version
FROM intel.entities
WHERE lower(id) LIKE '%' || $2 || '%' ESCAPE '\' OR lower(name) LIKE '%' || $2 || '%' ESCAPE '\'
ORDER BY CASE WHEN lower(id) = $1 OR lower(name) = $1 THEN 0
              WHEN lower(id) LIKE $2 || '%' ESCAPE '\' OR lower(name) LIKE $2 || '%' ESCAPE '\' THEN 1
              ELSE 2 END,
         lower(name), id
LIMIT $3 OFFSET $4
