-- +goose Up
-- Sorting by value (unit_value) had no index to walk: a page of all transfers sorted by value
-- read and sorted the whole table, and so did an entity's (which walks a global index and
-- probes its members, as by USD). A global value index serves both. Per address, pages by value
-- keep reading the address's (address, time) index entries, which carry unit_value, and
-- sorting them: per-address value indexes would serve a busy address directly but cost the
-- write path two more index insertions per transfer (docs/transfers.md, Storage).
-- Building it locks the transfers partitions against writes while it runs.
CREATE INDEX transfers_value ON transfers.transfers (unit_value);

-- +goose Down
DROP INDEX transfers.transfers_value;
