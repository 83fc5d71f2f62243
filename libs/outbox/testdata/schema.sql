CREATE SCHEMA relaytest;
CREATE TABLE relaytest.outbox (
    id       bigserial   PRIMARY KEY,
    event_id uuid        NOT NULL DEFAULT gen_random_uuid(),
    topic    text        NOT NULL,
    key      text        NOT NULL,
    payload  bytea       NOT NULL,
    sent_at  timestamptz
);
