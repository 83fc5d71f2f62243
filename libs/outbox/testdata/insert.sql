INSERT INTO relaytest.outbox (topic, key, payload) SELECT $1, * FROM unnest($2::text[], $3::bytea[])
