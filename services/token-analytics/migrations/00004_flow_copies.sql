-- +goose Up
-- A transfer keeps its natural id (chain, id) when a reorg moves its transaction to another
-- block, so market.flows keeps one row per copy (chain, id, block hash) and counts at most one of
-- them: the copy whose block is not orphaned (internal/store/sql/flows_settle.sql).
ALTER TABLE market.flows DROP CONSTRAINT flows_pkey, ADD PRIMARY KEY (chain, id, block_hash);

-- One row per natural id. Transfer writers lock their batch's ids here (in key order) before
-- storing copies, so two writers of one id run one after the other and the second sees the
-- first one's copy when it decides which copy counts.
CREATE TABLE market.flow_ids (
    chain text NOT NULL,
    id    text NOT NULL,
    PRIMARY KEY (chain, id)
);
INSERT INTO market.flow_ids (chain, id) SELECT DISTINCT chain, id FROM market.flows;

-- +goose Down
DROP TABLE market.flow_ids;
DELETE FROM market.flows f WHERE EXISTS (
    SELECT 1 FROM market.flows g
    WHERE g.chain = f.chain AND g.id = f.id AND (g.counted, g.block_hash) > (f.counted, f.block_hash));
ALTER TABLE market.flows DROP CONSTRAINT flows_pkey, ADD PRIMARY KEY (chain, id);
