-- +goose Up
-- When a replica last published the registry and the recent prices again (Store.Republish): a
-- periodic republish is skipped when another replica did one within its interval.
CREATE TABLE market.republished (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE market.republished;
