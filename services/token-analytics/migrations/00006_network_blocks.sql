-- +goose Up
-- Per block of the last two days of chain time (chain.transactions.v1): what GET /networks/status
-- reads for a chain's tip, transactions per second and gas price. A block's transactions can
-- arrive over several batches and again on redelivery, so its row keeps only figures that any
-- order and repetition leave the same: the highest transaction index seen plus one (the block's
-- transaction count once all are seen) and the lowest effective gas price seen. Orphaned blocks
-- (market.orphaned_blocks) are left out when read.
CREATE TABLE market.network_blocks (
    chain         text NOT NULL,
    block_hash    text NOT NULL,
    number        bigint NOT NULL,
    time          timestamptz NOT NULL,
    transactions  integer NOT NULL,
    min_gas_price double precision, -- wei; null when no transaction carried one
    PRIMARY KEY (chain, block_hash)
);
CREATE INDEX network_blocks_number ON market.network_blocks (chain, number DESC);
CREATE INDEX network_blocks_time ON market.network_blocks (chain, time);

-- +goose Down
DROP TABLE market.network_blocks;
