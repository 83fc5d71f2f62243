DELETE FROM relaytest.outbox WHERE sent_at IS NOT NULL AND sent_at < $1
