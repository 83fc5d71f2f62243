-- Every addition of a user to operator entities (one range of the primary key's user_id prefix).
SELECT entity_id, chain_type, address FROM userdata.operator_additions
WHERE user_id = $1
ORDER BY entity_id, chain_type, address
