SELECT id, event_id::text, topic, key, payload FROM relaytest.outbox WHERE sent_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED
