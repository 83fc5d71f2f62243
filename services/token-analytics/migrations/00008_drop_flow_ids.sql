-- +goose Up
-- Transfer writers of a chain serialize on an advisory lock and find the natural ids seen before
-- by market.flows' primary key (internal/store/sql/flows_chain_lock.sql, flows_seen.sql), so
-- the per-id claim table is no longer written.
DROP TABLE market.flow_ids;

-- +goose Down
CREATE TABLE market.flow_ids (
    chain text NOT NULL,
    id    text NOT NULL,
    PRIMARY KEY (chain, id)
);
INSERT INTO market.flow_ids (chain, id) SELECT DISTINCT chain, id FROM market.flows;
