-- +goose Up
-- The per-address USD indexes (migration 4) were two of the seven index insertions every
-- transfer costs, and among the dearest, and the write path's rate is bound by its index
-- insertions (docs/transfers.md, Storage). The global usd index carries
-- the addresses and the natural key instead, so a page of addresses sorted by USD reads the
-- natural keys of its rows from index entries alone (store.keyFirstSQL): the global index
-- walked with the addresses tested on each entry (a busy address), or the addresses' (address,
-- time) entries, which carry usd, read and sorted (a quiet one); then only the page's rows.
-- Dropping an index of the partitioned table drops every partition's. Building the new one
-- locks the transfers partitions against writes while it runs.
DROP INDEX transfers.transfers_from_usd, transfers.transfers_to_usd, transfers.transfers_usd;
CREATE INDEX transfers_usd ON transfers.transfers (usd NULLS FIRST) INCLUDE (from_addr, to_addr, block_time, uid);

-- +goose Down
DROP INDEX transfers.transfers_usd;
CREATE INDEX transfers_usd ON transfers.transfers (usd NULLS FIRST);
CREATE INDEX transfers_from_usd ON transfers.transfers (from_addr, usd NULLS FIRST);
CREATE INDEX transfers_to_usd ON transfers.transfers (to_addr, usd NULLS FIRST);
