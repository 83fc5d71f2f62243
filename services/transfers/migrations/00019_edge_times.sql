-- +goose Up
-- Bounds on the times of each entity pair row's transfers: t_first at or before the first, t_last
-- at or after the last (NULL: unknown, the hour's bounds). The apply writes them exactly; a
-- relabel's additions make them unknown; a reorg's subtraction leaves them (still bounds). A
-- keyset page turn of an entity picks the pair rows that can hold the page's transfers by them
-- and reads only those rows' transfers (store.edgeNewestPage). Added without a default: no
-- rewrite, and rows written before stay unknown.
ALTER TABLE transfers.grp_edges ADD COLUMN t_first timestamptz, ADD COLUMN t_last timestamptz;

-- +goose Down
ALTER TABLE transfers.grp_edges DROP COLUMN t_first, DROP COLUMN t_last;
