-- The unsent rows of the outbox table %[1]s, oldest first, up to $1, locked for this relay. The
-- caller holds the table's relay lock (lock.sql), so no other relay claims rows meanwhile; the
-- rows are locked without SKIP LOCKED, so a claimer without the relay lock (a replica of an
-- older version) is waited for rather than jumped over.
SELECT id, event_id::text, topic, key, payload FROM %[1]s
WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE
