-- +goose Up
-- An entity's self pair rows carry what a read of them needs (the addresses, chain, token and
-- count), so counting and paging them is an index-only scan instead of a heap read per pair
-- row (an exchange's transfers to its own deposit addresses, of which there are none, read
-- every self pair row).
DROP INDEX transfers.grp_edges_self;
CREATE INDEX grp_edges_self ON transfers.grp_edges (grp, bucket) INCLUDE (from_addr, to_addr, chain, token, n) WHERE side = 3;

-- +goose Down
DROP INDEX transfers.grp_edges_self;
CREATE INDEX grp_edges_self ON transfers.grp_edges (grp, bucket) WHERE side = 3;
