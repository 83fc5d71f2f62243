-- +goose Up
-- Pair rows of an entity group that stand for several transfers (n <> 1, about 1% of them in
-- the benchmark's world). A count or histogram with a USD or value range takes the single
-- transfer rows from grp_edges_usd and must read the transfers of these others
-- (store.edgeNotSingle); without this index the planner scans all of grp_edges for them.
CREATE INDEX grp_edges_multi ON transfers.grp_edges (grp, bucket) INCLUDE (side, usd, value) WHERE n <> 1;

-- +goose Down
DROP INDEX transfers.grp_edges_multi;
