-- The addresses of the user's entities among the ids (uuids), by chain type and address.
SELECT entity_id::text, chain_type, address FROM userdata.entity_addresses
WHERE user_id = $1 AND entity_id = ANY($2::uuid[])
ORDER BY chain_type, address
