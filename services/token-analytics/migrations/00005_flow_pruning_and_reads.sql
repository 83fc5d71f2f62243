-- +goose Up
-- Pruning (internal/store/sql/prune_*.sql) deletes the transfer copies and per-address rows of
-- hours before the retention horizon. Both tables are written roughly in time order, so a BRIN
-- index finds those rows for a fraction of a B-tree's size and upkeep on every write.
CREATE INDEX flows_hour_brin ON market.flows USING brin (hour);
CREATE INDEX flow_address_hours_hour_brin ON market.flow_address_hours USING brin (hour);

-- /token/volume reads a token's hours (or days) in a row: with the volumes in the primary key's
-- leaf entries it reads them from a few index pages (an index-only scan) instead of one heap
-- page per hour.
ALTER TABLE market.flow_hours DROP CONSTRAINT flow_hours_pkey,
    ADD PRIMARY KEY (chain, token, hour) INCLUDE (volume_usd, volume_value);
ALTER TABLE market.flow_days DROP CONSTRAINT flow_days_pkey,
    ADD PRIMARY KEY (chain, token, day) INCLUDE (volume_usd, volume_value);

-- +goose Down
ALTER TABLE market.flow_days DROP CONSTRAINT flow_days_pkey, ADD PRIMARY KEY (chain, token, day);
ALTER TABLE market.flow_hours DROP CONSTRAINT flow_hours_pkey, ADD PRIMARY KEY (chain, token, hour);
DROP INDEX market.flow_address_hours_hour_brin;
DROP INDEX market.flows_hour_brin;
