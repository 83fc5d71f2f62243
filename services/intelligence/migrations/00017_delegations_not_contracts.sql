-- +goose Up
-- An EIP-7702 delegation designator (0xef0100 and the 20-byte address delegated to: 23 bytes)
-- is an EOA's code, not a contract's: its key still signs its transactions and its owner can
-- clear or change it. Ingest releases before this one flagged such accounts as contracts and
-- published contract records for them, and intelligence stored the records and marked the
-- addresses contract: true, a mark nothing takes back (contracts_mark.sql). This removes those
-- records and, where no other record of the address holds a contract's code, the mark, taking a
-- new attribution version so the outbox relay publishes the change, as an import's relabel does
-- (under the same version lock). Marks made by transfer flags alone (no record) cannot be told
-- apart from a contract's and stay. The consumer no longer stores such records (events.contract).
SELECT pg_advisory_xact_lock(452824687980); -- store.versionLock

UPDATE intel.addresses a
SET is_contract = false, version = nextval('intel.attribution_version'), updated_at = now()
WHERE a.chain_type = 'evm' AND a.is_contract
    AND EXISTS (SELECT FROM intel.contracts c
        WHERE c.address = a.address AND c.bytecode_size = 23 AND lower(c.bytecode) LIKE '0xef0100%')
    AND NOT EXISTS (SELECT FROM intel.contracts c
        WHERE c.address = a.address AND NOT (c.bytecode_size = 23 AND lower(c.bytecode) LIKE '0xef0100%'));

DELETE FROM intel.contracts
WHERE bytecode_size = 23 AND lower(bytecode) LIKE '0xef0100%';

-- +goose Down
-- The removed records are not restored: the consumer would not store them either.
SELECT 1;
