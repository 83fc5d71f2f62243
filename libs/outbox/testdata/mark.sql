UPDATE relaytest.outbox SET sent_at = now() WHERE id = ANY($1)
