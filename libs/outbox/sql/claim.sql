-- The unsent rows of the outbox table %[1]s, oldest first, up to $1, locked for this relay and
-- skipping rows another relay holds.
SELECT id, event_id::text, topic, key, payload FROM %[1]s
WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
