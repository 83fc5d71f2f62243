-- +goose Up
-- Addresses that are in two entity groups: an address of one entity that is a deposit address
-- of another. A base of several entities is counted and paged from its groups' rollups only
-- when none of its entities share an address (store.disjointEntityGroups); this index answers
-- that in one probe per entity instead of reading every address of the entities. Such
-- addresses are rare, so the index is small.
CREATE INDEX attributions_cross ON transfers.attributions (entity_id, deposit_service_id)
    WHERE entity_id <> '' AND deposit_service_id <> '' AND deposit_service_id <> entity_id;

-- +goose Down
DROP INDEX transfers.attributions_cross;
