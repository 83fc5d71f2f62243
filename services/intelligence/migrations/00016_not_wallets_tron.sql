-- +goose Up
-- Tron's zero address T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb (base58 of 41 and 20 zero bytes: the
-- other side of every TRC-20 mint and burn) is no one's wallet either (address.NotWallet);
-- importers now skip it. This removes what earlier imports stored on it the way 00015 does for
-- the EVM zero and burn addresses: under the attribution version lock, the attribution becomes
-- what store.resolve computes for an address without claims and takes a new version, so the
-- outbox relay publishes it and the triggers log the change and mark the entity that loses it.
SELECT pg_advisory_xact_lock(452824687980); -- store.versionLock

UPDATE intel.addresses a
SET entity_id = NULL, label = '', confidence = 0, source = '', version = nextval('intel.attribution_version'), updated_at = now()
WHERE a.chain_type = 'tron' AND a.address = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb'
    AND (EXISTS (SELECT FROM intel.claims c WHERE c.chain_type = a.chain_type AND c.address = a.address)
        OR EXISTS (SELECT FROM intel.address_tags t WHERE t.chain_type = a.chain_type AND t.address = a.address));

DELETE FROM intel.address_tags WHERE chain_type = 'tron' AND address = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';

DELETE FROM intel.claims WHERE chain_type = 'tron' AND address = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';

-- +goose Down
-- The removed claims are not restored: importing the packs again would not store them either.
SELECT 1;
