-- +goose Up
-- Alerts (/user/alerts): a caller's rules over transfers, with the filter fields of a stream
-- filter, each delivered through one of the caller's delivery methods (/user/alert_methods, a
-- webhook). Both belong to the user (user_id, as everything here) and every query filters on
-- it. Ids are integers, as the mirrored API's alert ids are.

-- A caller's webhook. secret signs the deliveries (HMAC-SHA256; shown to the caller once, when
-- the method is created). Methods have no update: a caller creates another and moves the alerts.
CREATE TABLE userdata.alert_methods (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text        NOT NULL,
    kind        text        NOT NULL CHECK (kind = 'webhook'),
    url         text        NOT NULL,
    description text,
    secret      text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alert_methods_user_idx ON userdata.alert_methods (user_id, id);

-- A caller's alert. base and chains are NULL when the caller gave null (the mirrored API tells
-- null from []); from, to and tokens are [] when none. The bounds are double precision, as the
-- stream filter compares them. method_id's foreign key refuses deleting a method an alert uses.
CREATE TABLE userdata.alerts (
    id          bigint           GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text             NOT NULL,
    name        text             NOT NULL,
    enabled     boolean          NOT NULL,
    base        text[],
    from_refs   text[]           NOT NULL,
    to_refs     text[]           NOT NULL,
    tokens      text[]           NOT NULL,
    chains      text[],
    usd_gte     double precision,
    usd_lte     double precision,
    value_gte   double precision,
    value_lte   double precision,
    description text,
    method_id   bigint           NOT NULL REFERENCES userdata.alert_methods (id),
    created_at  timestamptz      NOT NULL DEFAULT now(),
    updated_at  timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX alerts_user_idx ON userdata.alerts (user_id, id);
CREATE INDEX alerts_method_idx ON userdata.alerts (method_id);

-- +goose Down
DROP TABLE userdata.alerts;
DROP TABLE userdata.alert_methods;
