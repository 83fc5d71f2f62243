-- +goose Up
-- A counter per deployment that every statement changing flow_address_hours rows of closed
-- hours moves in its transaction (late copies, settling, reorgs: flows_rollup_first and
-- flows_rollup_tail). The close writes only hours from rolled_until on and moves rolled_until,
-- pruning only hours before the flow horizon, so (rolled_until, version) says whether a
-- deployment's closed rows of a window inside the horizon changed: top_flow keeps their
-- per-address sums in memory under that stamp (internal/store/topflow_cache.go). A deployment
-- without a row is at version 0.
CREATE TABLE market.flow_address_versions (
    chain   text NOT NULL,
    token   text NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (chain, token)
);

-- +goose Down
DROP TABLE market.flow_address_versions;
