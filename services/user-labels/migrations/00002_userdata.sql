-- +goose Up
-- Labels and entities belong to the user (the X-Caller-User-Id the edge signs), never to a key or
-- an org: every table is keyed or indexed by user_id and every query filters on it.

-- A user's private label of one address, identified by (chain_type, address). Addresses are
-- stored in their canonical form (libs/address: EVM lower-case).
CREATE TABLE userdata.labels (
    user_id    text        NOT NULL,
    chain_type text        NOT NULL,
    address    text        NOT NULL,
    name       text        NOT NULL,
    note       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, chain_type, address)
);

-- The versions of a user's label set and entity set, each bumped in the same transaction as every
-- change of it. A replica may serve a cached answer (the encoded label list, the lookup index)
-- only while the versions it was built at are still the stored ones, so a cache never serves a
-- stale answer, whichever replica wrote.
CREATE TABLE userdata.user_versions (
    user_id  text   PRIMARY KEY,
    labels   bigint NOT NULL DEFAULT 0,
    entities bigint NOT NULL DEFAULT 0
);

-- A user's custom entity. Its row is the lock taken (FOR UPDATE) before its address set changes,
-- so concurrent changes cannot push it past the address limit.
CREATE TABLE userdata.entities (
    id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    -- seq orders a user's entities by creation, also among those created in one transaction.
    seq        bigint      GENERATED ALWAYS AS IDENTITY,
    user_id    text        NOT NULL,
    name       text        NOT NULL,
    note       text        NOT NULL,
    shareable  boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entities_user_idx ON userdata.entities (user_id, seq);

-- The addresses of a user entity. user_id repeats the owner so a batch lookup of a user's
-- memberships is one index range per address.
CREATE TABLE userdata.entity_addresses (
    entity_id  uuid        NOT NULL REFERENCES userdata.entities (id) ON DELETE CASCADE,
    user_id    text        NOT NULL,
    chain_type text        NOT NULL,
    address    text        NOT NULL,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (entity_id, chain_type, address)
);
CREATE INDEX entity_addresses_lookup_idx ON userdata.entity_addresses (user_id, chain_type, address);

-- A user's additions to an operator entity (PUT /user/entities/only_add/{slug}). The operator
-- entity itself lives in the intelligence service; only its slug is kept here.
CREATE TABLE userdata.operator_additions (
    user_id    text        NOT NULL,
    entity_id  text        NOT NULL,
    chain_type text        NOT NULL,
    address    text        NOT NULL,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, entity_id, chain_type, address)
);

-- Events written in the same transaction as the change they describe; the relay publishes them
-- to Kafka and marks them sent. event_id travels as the event id header, so a re-publish after a
-- crash between publishing and marking carries the same id.
CREATE TABLE userdata.outbox (
    id         bigserial   PRIMARY KEY,
    event_id   uuid        NOT NULL DEFAULT gen_random_uuid(),
    topic      text        NOT NULL,
    key        text        NOT NULL,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz
);
CREATE INDEX outbox_pending_idx ON userdata.outbox (id) WHERE sent_at IS NULL;
CREATE INDEX outbox_sent_idx ON userdata.outbox (sent_at) WHERE sent_at IS NOT NULL;

-- +goose Down
DROP TABLE userdata.outbox;
DROP TABLE userdata.operator_additions;
DROP TABLE userdata.entity_addresses;
DROP TABLE userdata.entities;
DROP TABLE userdata.user_versions;
DROP TABLE userdata.labels;
