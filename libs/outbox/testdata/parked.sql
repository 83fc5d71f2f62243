SELECT id, failed FROM relaytest.outbox WHERE failed IS NOT NULL ORDER BY id
