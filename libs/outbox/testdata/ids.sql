SELECT event_id::text FROM relaytest.outbox ORDER BY id
