-- +goose Up
-- Pruning (internal/store/sql/prune_*.sql) deletes the transfer copies and per-address rows of
-- hours before the retention horizon. Both tables are written roughly in time order, so a BRIN
-- index finds those rows for a fraction of a B-tree's size and upkeep on every write.
CREATE INDEX flows_hour_brin ON market.flows USING brin (hour);
CREATE INDEX flow_address_hours_hour_brin ON market.flow_address_hours USING brin (hour);

-- +goose Down
DROP INDEX market.flow_address_hours_hour_brin;
DROP INDEX market.flows_hour_brin;
