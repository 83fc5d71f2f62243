-- +goose Up
-- A class change finds an address's closed hours by its address alone (the chain type is checked
-- on the rows found): a hash index stores a 4-byte hash per row instead of the B-tree's
-- (chain_type, address) text, and the hour close, which inserts about two rows per transfer,
-- maintains it for less.
DROP INDEX market.flow_address_hours_address;
CREATE INDEX flow_address_hours_address ON market.flow_address_hours USING hash (address);

-- +goose Down
DROP INDEX market.flow_address_hours_address;
CREATE INDEX flow_address_hours_address ON market.flow_address_hours (chain_type, address);
