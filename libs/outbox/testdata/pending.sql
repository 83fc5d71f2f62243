SELECT count(*) FROM relaytest.outbox WHERE sent_at IS NULL
