-- The user's labels whose name, or address, matches: exact matches first, then prefixes, then
-- substrings, ties by the lower-cased name in byte order, chain type, address; $2 is the
-- query, $3 the same as a LIKE pattern body (escaped), both lower-cased here by the function that
-- lower-cases the names; names containing the query match only when $7
-- (app.SubstringSearchable: a query without a trigram to look up matches prefixes only).
-- Only the first $6 labels of that ranking are answered ($4 after skipping $5 of them; an offset
-- at or past $6 answers none).
-- They are found without ranking every match: each reason to match (equal address; name
-- starting with the query; address starting with it; name containing it) contributes its first
-- $6 labels in name order, read off labels_name_order_idx, or found as a range of
-- labels_address_prefix_idx (addresses) or with the trigram index labels_search_idx (names),
-- and the union holds the first $6 of the whole ranking: a label among them
-- is preceded in its own reason's name order only by labels the ranking also puts before it
-- (exact names sort first among the names starting with the query).
WITH prefixed AS MATERIALIZED (
    SELECT name, note, address, chain_type FROM userdata.labels
    WHERE user_id = $1 AND lower(name) COLLATE "C" LIKE lower($3::text) || '%' ESCAPE '\'
    ORDER BY lower(name) COLLATE "C", chain_type, address LIMIT $6
), c AS (
    (SELECT name, note, address, chain_type FROM userdata.labels
     WHERE user_id = $1 AND lower(address) COLLATE "C" = lower($2::text)
     ORDER BY lower(name) COLLATE "C", chain_type, address LIMIT $6)
    UNION
    SELECT name, note, address, chain_type FROM prefixed
    UNION
    (SELECT name, note, address, chain_type FROM userdata.labels
     WHERE user_id = $1 AND lower(address) COLLATE "C" LIKE lower($3::text) || '%' ESCAPE '\'
     ORDER BY lower(name) COLLATE "C", chain_type, address LIMIT $6)
    UNION
    -- Skipped without $7, and when $6 names start with the query: then no substring match can be
    -- among the first $6 of the ranking.
    (SELECT name, note, address, chain_type FROM userdata.labels
     WHERE $7 AND user_id = $1 AND lower(name) LIKE '%' || lower($3::text) || '%' ESCAPE '\'
       AND (SELECT count(*) FROM prefixed) < $6
     ORDER BY lower(name) COLLATE "C", chain_type, address LIMIT $6)
), ranked AS (
    SELECT name, note, address, chain_type,
           CASE WHEN lower(name) = lower($2::text) OR lower(address) = lower($2::text) THEN 0
                WHEN lower(name) LIKE lower($3::text) || '%' ESCAPE '\' OR lower(address) LIKE lower($3::text) || '%' ESCAPE '\' THEN 1
                ELSE 2 END AS rank
    FROM c
), bounded AS (
    SELECT * FROM ranked ORDER BY rank, lower(name) COLLATE "C", chain_type, address LIMIT $6
)
SELECT name, note, address, chain_type
FROM bounded
ORDER BY rank, lower(name) COLLATE "C", chain_type, address
LIMIT $4 OFFSET $5
