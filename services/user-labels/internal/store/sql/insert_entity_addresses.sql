-- Adds addresses to the user's ($1) entities: parallel arrays of entity ids ($2), chain types ($3)
-- and addresses ($4).
INSERT INTO userdata.entity_addresses (entity_id, user_id, chain_type, address)
SELECT entity_id::uuid, $1, chain_type, address
FROM unnest($2::text[], $3::text[], $4::text[]) AS q(entity_id, chain_type, address)
ON CONFLICT DO NOTHING
