TRUNCATE relaytest.outbox
