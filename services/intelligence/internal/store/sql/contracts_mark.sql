-- Marks addresses as contracts ($1 chain types, $2 addresses, one per pair, in lock order): a
-- new attribution version for each address not marked yet, nothing for one already marked, so
-- a record read again changes nothing. Never unmarks: code at an address stays.
INSERT INTO intel.addresses AS a (chain_type, address, is_contract, version)
SELECT ct, addr, true, nextval('intel.attribution_version')
FROM (SELECT DISTINCT ct, addr FROM unnest($1::text[], $2::text[]) AS u(ct, addr) ORDER BY ct, addr) d
ON CONFLICT (chain_type, address) DO UPDATE SET is_contract = true, version = excluded.version, updated_at = now()
WHERE NOT a.is_contract
