-- +goose Up
-- Ids of usage events already aggregated: the metering consumer is idempotent on them.
CREATE TABLE edge.usage_events (
    event_id    text PRIMARY KEY,
    seen_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_events_seen_at ON edge.usage_events (seen_at);

-- Hourly rollups per key and route pattern; user and org are the key's, so the same rows
-- answer per-user and per-org questions.
CREATE TABLE edge.usage_hourly (
    key_id      text NOT NULL,
    hour        timestamptz NOT NULL,
    route       text NOT NULL,
    user_id     text NOT NULL,
    org_id      text NOT NULL DEFAULT '',
    calls       bigint NOT NULL CHECK (calls >= 0),
    credits     bigint NOT NULL CHECK (credits >= 0),
    PRIMARY KEY (key_id, hour, route)
);
CREATE INDEX usage_hourly_user ON edge.usage_hourly (user_id, hour);
CREATE INDEX usage_hourly_org ON edge.usage_hourly (org_id, hour) WHERE org_id <> '';

-- Billing periods (calendar months, UTC) per billed entity: the org, or the individual user.
CREATE TABLE edge.credit_periods (
    entity_type      text NOT NULL CHECK (entity_type IN ('org', 'user')),
    entity_id        text NOT NULL,
    period_start     timestamptz NOT NULL,
    period_end       timestamptz NOT NULL,
    credits_included bigint NOT NULL CHECK (credits_included >= 0),
    credits_used     bigint NOT NULL CHECK (credits_used >= 0),
    computed_at      timestamptz NOT NULL,
    PRIMARY KEY (entity_type, entity_id, period_start)
);

-- +goose Down
DROP TABLE edge.credit_periods;
DROP TABLE edge.usage_hourly;
DROP TABLE edge.usage_events;
