-- +goose Up
-- The pair_hourly rows of a live entity group, keyed by group and hour (migration 3), were
-- named grp_edges; "edge" is also the gateway (services/edge). They are the entity pair rows
-- (docs/transfers.md), and take that name with their indexes, trigger and trigger function.
-- A rename touches only the catalog: no row is rewritten.
ALTER TABLE transfers.grp_edges RENAME TO entity_pair_rows;
ALTER INDEX transfers.grp_edges_pkey RENAME TO entity_pair_rows_pkey;
ALTER INDEX transfers.grp_edges_usd RENAME TO entity_pair_rows_usd;
ALTER INDEX transfers.grp_edges_multi RENAME TO entity_pair_rows_multi;
ALTER INDEX transfers.grp_edges_self RENAME TO entity_pair_rows_self;
ALTER TRIGGER grp_edges_drop_uid ON transfers.entity_pair_rows RENAME TO entity_pair_rows_drop_uid;
ALTER FUNCTION transfers.grp_edges_drop_uid() RENAME TO entity_pair_rows_drop_uid;

-- +goose Down
ALTER FUNCTION transfers.entity_pair_rows_drop_uid() RENAME TO grp_edges_drop_uid;
ALTER TRIGGER entity_pair_rows_drop_uid ON transfers.entity_pair_rows RENAME TO grp_edges_drop_uid;
ALTER INDEX transfers.entity_pair_rows_self RENAME TO grp_edges_self;
ALTER INDEX transfers.entity_pair_rows_multi RENAME TO grp_edges_multi;
ALTER INDEX transfers.entity_pair_rows_usd RENAME TO grp_edges_usd;
ALTER INDEX transfers.entity_pair_rows_pkey RENAME TO grp_edges_pkey;
ALTER TABLE transfers.entity_pair_rows RENAME TO grp_edges;
