-- The user's entities whose name matches, or that hold an address starting with the query:
-- exact names first, then names starting with the query, then the rest, ties by the lower-cased
-- name in byte order, then creation (seq); names containing the query match only when $7 (as in
-- search_labels.sql). Only the first $6 entities of that ranking are
-- answered ($4 after skipping $5; an offset at or past $6 answers none). As in
-- search_labels.sql, each reason to match (name starting with the query, which puts exact names
-- first; name containing it; an address starting with it, a range of
-- entity_addresses_prefix_idx) contributes its first $6 entities in name order, and their union
-- holds the first $6 of the whole ranking.
WITH prefixed AS MATERIALIZED (
    SELECT id, seq, name, note, shareable, created_at, updated_at FROM userdata.entities
    WHERE user_id = $1 AND lower(name) COLLATE "C" LIKE lower($3::text) || '%' ESCAPE '\'
    ORDER BY lower(name) COLLATE "C", seq LIMIT $6
), c AS (
    SELECT id, seq, name, note, shareable, created_at, updated_at FROM prefixed
    UNION
    -- Skipped without $7, and when $6 names start with the query: then no other match can be
    -- among the first $6.
    (SELECT id, seq, name, note, shareable, created_at, updated_at FROM userdata.entities
     WHERE $7 AND user_id = $1 AND lower(name) LIKE '%' || lower($3::text) || '%' ESCAPE '\'
       AND (SELECT count(*) FROM prefixed) < $6
     ORDER BY lower(name) COLLATE "C", seq LIMIT $6)
    UNION
    (SELECT id, seq, name, note, shareable, created_at, updated_at FROM userdata.entities
     WHERE user_id = $1
       AND id IN (SELECT a.entity_id FROM userdata.entity_addresses a
                  WHERE a.user_id = $1 AND lower(a.address) COLLATE "C" LIKE lower($3::text) || '%' ESCAPE '\')
       AND (SELECT count(*) FROM prefixed) < $6
     ORDER BY lower(name) COLLATE "C", seq LIMIT $6)
), bounded AS (
    SELECT id, seq, name, note, shareable, created_at, updated_at,
           CASE WHEN lower(name) = lower($2::text) THEN 0 WHEN lower(name) LIKE lower($3::text) || '%' ESCAPE '\' THEN 1 ELSE 2 END AS rank
    FROM c
    ORDER BY rank, lower(name) COLLATE "C", seq LIMIT $6
)
SELECT id::text, name, note, shareable, created_at, updated_at
FROM bounded
ORDER BY rank, lower(name) COLLATE "C", seq
LIMIT $4 OFFSET $5
