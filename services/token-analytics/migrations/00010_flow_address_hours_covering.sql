-- +goose Up
-- top_flow reads a token's closed hours of flow_address_hours by its primary key and sums the
-- four amounts per address: with them in the key's leaf entries the read is an index-only scan
-- (no heap page per row of the window, once the rows' pages are all-visible). Late legs of
-- closed hours update the amounts (flows_rollup_first/tail), which then are not HOT updates.
ALTER TABLE market.flow_address_hours
    DROP CONSTRAINT flow_address_hours_pkey,
    ADD PRIMARY KEY (chain, token, hour, address) INCLUDE (in_usd, in_value, out_usd, out_value);

-- +goose Down
ALTER TABLE market.flow_address_hours
    DROP CONSTRAINT flow_address_hours_pkey,
    ADD PRIMARY KEY (chain, token, hour, address);
