-- +goose Up
-- Sorting by value (unit_value) had no index to walk: a page of all transfers sorted by value
-- read and sorted the whole table (6 s at 10M rows), an entity's (walking the set's members
-- through a global index, as by USD) 10 s, a hot wallet's all its index entries (0.3 s). These
-- mirror the USD indexes, so every sort key has an index per address side and a global one.
-- They cost the write path three more index insertions per transfer (docs/transfers.md).
-- Building them locks the transfers partitions against writes while it runs.
CREATE INDEX transfers_value ON transfers.transfers (unit_value);
CREATE INDEX transfers_from_value ON transfers.transfers (from_addr, unit_value);
CREATE INDEX transfers_to_value ON transfers.transfers (to_addr, unit_value);

-- +goose Down
DROP INDEX transfers.transfers_value, transfers.transfers_from_value, transfers.transfers_to_value;
