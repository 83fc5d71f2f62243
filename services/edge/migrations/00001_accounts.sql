-- +goose Up
CREATE TABLE edge.orgs (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 256),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE edge.users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    org_id      uuid REFERENCES edge.orgs (id),
    email       text NOT NULL UNIQUE CHECK (length(email) BETWEEN 3 AND 320),
    role        text NOT NULL CHECK (role IN ('org_admin', 'org_member', 'individual')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((role = 'individual') = (org_id IS NULL))
);

-- API keys are stored as SHA-256 of the key; only a short prefix is kept for display.
CREATE TABLE edge.api_keys (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES edge.users (id),
    key_hash    bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    prefix      text NOT NULL,
    name        text NOT NULL DEFAULT '',
    tier        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX api_keys_user ON edge.api_keys (user_id);

-- +goose Down
DROP TABLE edge.api_keys;
DROP TABLE edge.users;
DROP TABLE edge.orgs;
