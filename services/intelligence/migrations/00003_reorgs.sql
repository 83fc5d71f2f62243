-- +goose Up
-- Reorgs (chain.reorgs.v1): the transfers of orphaned blocks are taken back out of the heuristic
-- inputs (edges, address_activity).
--
-- * block_facts journals, per block, what each applied transfer added (sender, recipient, USD),
--   for as long as a reorg may name the block (two days of chain time: store.JournalRetention); a reorg
--   subtracts its blocks' facts and deletes them, so a redelivered reorg changes nothing.
-- * orphaned_blocks: transfers of these blocks arriving after their reorg (topics are not
--   ordered with each other) are dropped.
-- * edges.n counts the transfers on an edge, so an edge only orphaned transfers made goes away;
--   NULL for edges recorded before this migration (their count is unknown, a reorg never
--   removes them). first_ms and last_ms are not taken back.
ALTER TABLE intel.edges ADD COLUMN n bigint;

CREATE TABLE intel.block_facts (
    chain        text   NOT NULL,
    block_hash   text   NOT NULL,
    chain_type   text   NOT NULL,
    newest_ms    bigint NOT NULL,
    from_addr    text[] NOT NULL,
    to_addr      text[] NOT NULL,
    usd          double precision[] NOT NULL,
    PRIMARY KEY (chain, block_hash)
);
CREATE INDEX block_facts_age ON intel.block_facts (chain, newest_ms);

CREATE TABLE intel.orphaned_blocks (
    chain       text NOT NULL,
    block_hash  text NOT NULL,
    orphaned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, block_hash)
);

-- +goose Down
DROP TABLE intel.orphaned_blocks, intel.block_facts;
ALTER TABLE intel.edges DROP COLUMN n;
