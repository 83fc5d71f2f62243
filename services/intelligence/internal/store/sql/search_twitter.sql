-- Operator entities whose twitter handle or address contains $2 (as search_entities.sql).
SELECT id, name, type, note, description, website, twitter, linkedin, service, version
FROM intel.entities
WHERE twitter <> '' AND lower(twitter) LIKE '%' || $2 || '%' ESCAPE '\'
ORDER BY CASE WHEN lower(twitter) = $1 OR lower(twitter) LIKE '%/' || $2 ESCAPE '\' THEN 0 ELSE 1 END,
         lower(name), id
LIMIT $3 OFFSET $4
