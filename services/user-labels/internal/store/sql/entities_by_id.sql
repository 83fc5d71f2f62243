-- The user's entities among the ids (uuids), oldest first.
SELECT id::text, name, note, shareable, created_at, updated_at FROM userdata.entities
WHERE user_id = $1 AND id = ANY($2::uuid[])
ORDER BY seq
