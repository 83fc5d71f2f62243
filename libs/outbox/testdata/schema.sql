CREATE SCHEMA relaytest;
CREATE TABLE relaytest.outbox (
    id       bigserial   PRIMARY KEY,
    event_id uuid        NOT NULL DEFAULT gen_random_uuid(),
    topic    text        NOT NULL,
    key      text        NOT NULL,
    payload  bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at  timestamptz,
    failed   text
);
CREATE INDEX outbox_pending ON relaytest.outbox (id) WHERE sent_at IS NULL;
