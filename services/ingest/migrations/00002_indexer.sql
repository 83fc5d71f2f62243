-- +goose Up
-- Where each chain's indexer stands: the last block whose events Kafka acknowledged.
CREATE TABLE ingest.cursors (
    chain        text PRIMARY KEY,
    block_number bigint NOT NULL,
    block_hash   text NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Recent block hashes, for reorg detection. A row is written before the block's events are
-- published (so a crash between the two still knows what was published) and pruned once it is
-- deeper than the reorg window. touched lists "address|token" pairs whose balances the block
-- changed, re-read when the block is orphaned.
CREATE TABLE ingest.blocks (
    chain        text NOT NULL,
    block_number bigint NOT NULL,
    block_hash   text NOT NULL,
    parent_hash  text NOT NULL,
    touched      text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (chain, block_number)
);

-- Balances to re-read at the next block after a reorg.
CREATE TABLE ingest.rebalance (
    chain   text NOT NULL,
    address text NOT NULL,
    token   text NOT NULL, -- '' for the native coin
    PRIMARY KEY (chain, address, token)
);

-- Token metadata discovered with eth_call; a row exists once its chain.tokens.v1 event was
-- acknowledged.
CREATE TABLE ingest.tokens (
    chain            text NOT NULL,
    address          text NOT NULL,
    name             text NOT NULL,
    symbol           text NOT NULL,
    decimals         integer NOT NULL,
    non_standard     boolean NOT NULL,
    discovered_block bigint NOT NULL,
    discovered_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, address)
);

-- DEX pools' token pairs (token0()/token1()); ok is false for contracts that emit a Swap-shaped
-- log but do not answer them.
CREATE TABLE ingest.pools (
    chain   text NOT NULL,
    address text NOT NULL,
    token0  text NOT NULL,
    token1  text NOT NULL,
    ok      boolean NOT NULL,
    PRIMARY KEY (chain, address)
);

-- +goose Down
DROP TABLE ingest.pools;
DROP TABLE ingest.tokens;
DROP TABLE ingest.rebalance;
DROP TABLE ingest.blocks;
DROP TABLE ingest.cursors;
