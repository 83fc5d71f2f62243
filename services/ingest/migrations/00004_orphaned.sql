-- +goose Up
-- Block hashes published as orphaned on chain.reorgs.v1, written before the Reorg is published.
-- When ingest ingests one of them again (the chain went back to it), it publishes a Reorg naming
-- it canonical before the block's events, and the row goes once that round is committed; rows
-- deeper than the reorg window are pruned. seq tells one orphaning of a hash from a later one.
CREATE TABLE ingest.orphaned (
    chain        text NOT NULL,
    block_number bigint NOT NULL,
    block_hash   text NOT NULL,
    seq          bigserial NOT NULL,
    PRIMARY KEY (chain, block_hash)
);

-- +goose Down
DROP TABLE ingest.orphaned;
