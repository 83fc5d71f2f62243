-- +goose Up
-- An entity's self pair rows (side 3: both addresses its own, e.g. its sweeps from deposit
-- addresses to hot wallets; about a fifth of the pair rows in the benchmark's world). A read of
-- them alone (from=deposit:<id>&to=<id>, base=<id>&flow=self) would otherwise walk every pair
-- row of the entity looking for them.
CREATE INDEX grp_edges_self ON transfers.grp_edges (grp, bucket) WHERE side = 3;

-- +goose Down
DROP INDEX transfers.grp_edges_self;
