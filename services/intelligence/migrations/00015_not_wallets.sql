-- +goose Up
-- The zero address (the other side of every token mint and burn) and the burn address 0x…dEaD
-- are no one's wallet, but imports before this release accepted claims on them (a GraphSense
-- pack tags the zero address as MakerDAO's faucet, so every mint and burn showed MakerDAO).
-- Importers now skip them (importer.NotWallet); this removes what earlier imports stored. It
-- takes the path of an import's relabel: under the attribution version lock, the addresses'
-- attribution becomes what store.resolve computes for an address without claims and takes a new
-- version, so the outbox relay publishes it on intel.attributions.v1 (a tombstone when nothing
-- else is known of it) and the triggers log the change and mark the entities that lose it.
SELECT pg_advisory_xact_lock(452824687980); -- store.versionLock

UPDATE intel.addresses a
SET entity_id = NULL, label = '', confidence = 0, source = '', version = nextval('intel.attribution_version'), updated_at = now()
WHERE (a.chain_type, a.address) IN (VALUES ('evm', '0x0000000000000000000000000000000000000000'), ('evm', '0x000000000000000000000000000000000000dead'))
    AND (EXISTS (SELECT FROM intel.claims c WHERE c.chain_type = a.chain_type AND c.address = a.address)
        OR EXISTS (SELECT FROM intel.address_tags t WHERE t.chain_type = a.chain_type AND t.address = a.address));

DELETE FROM intel.address_tags
WHERE (chain_type, address) IN (VALUES ('evm', '0x0000000000000000000000000000000000000000'), ('evm', '0x000000000000000000000000000000000000dead'));

DELETE FROM intel.claims
WHERE (chain_type, address) IN (VALUES ('evm', '0x0000000000000000000000000000000000000000'), ('evm', '0x000000000000000000000000000000000000dead'));

-- +goose Down
-- The removed claims are not restored: importing the packs again would not store them either.
SELECT 1;
