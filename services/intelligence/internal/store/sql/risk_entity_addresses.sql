-- The addresses of operator entity $1 a risk score covers: its busiest $2 attributed addresses
-- by USD volume (address_activity; none counts as 0), ties by chain type and address. Every
-- address of the entity is read to sort them (the addresses_entity index).
SELECT a.chain_type, a.address
FROM intel.addresses a
LEFT JOIN intel.address_activity act ON act.chain_type = a.chain_type AND act.address = a.address
WHERE a.entity_id = $1
ORDER BY COALESCE(act.volume_usd, 0) DESC, a.chain_type, a.address
LIMIT $2
