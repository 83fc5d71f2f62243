-- The additions of a user to the operator entities among the ids (one range of the primary key
-- per id).
SELECT entity_id, chain_type, address FROM userdata.operator_additions
WHERE user_id = $1 AND entity_id = ANY($2::text[])
ORDER BY entity_id, chain_type, address
