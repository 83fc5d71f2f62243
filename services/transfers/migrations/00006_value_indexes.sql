-- +goose Up
-- Sorting by value (unit_value) had no index to walk: a page of all transfers sorted by value
-- read and sorted the whole table (6 s at 10M rows), and an entity's (which walks a global
-- index and probes its members, as by USD) 10 s. A global value index serves both. Per address,
-- pages by value keep reading the address's (address, time) index entries, which carry
-- unit_value, and sorting them: two more per-address indexes cut a hot wallet's 0.3 s to 7 ms
-- but cost the write path a quarter of its rate (docs/transfers.md).
-- Building it locks the transfers partitions against writes while it runs.
CREATE INDEX transfers_value ON transfers.transfers (unit_value);

-- +goose Down
DROP INDEX transfers.transfers_value;
