-- +goose Up
-- Leases held by one replica at a time, by name (Store.TakeLease): the price poller's, so one
-- replica polls the price API and the deployment keeps within the API key's budget. A holder
-- renews its lease before it expires; another replica takes it once it has.
CREATE TABLE market.leases (
    name text PRIMARY KEY,
    holder text NOT NULL,
    until timestamptz NOT NULL
);

-- +goose Down
DROP TABLE market.leases;
