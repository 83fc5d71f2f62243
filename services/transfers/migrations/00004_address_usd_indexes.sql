-- +goose Up
-- An address's transfers sorted by USD: with only the global usd index the planner walks it,
-- filtering for the address, through a large part of the table; these serve the page directly.
-- They cost the write path two more index insertions per transfer.
CREATE INDEX transfers_from_usd ON transfers.transfers (from_addr, usd NULLS FIRST);
CREATE INDEX transfers_to_usd ON transfers.transfers (to_addr, usd NULLS FIRST);

-- +goose Down
DROP INDEX transfers.transfers_from_usd, transfers.transfers_to_usd;
