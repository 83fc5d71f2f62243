-- Removes every addition of user $1 to operator entity $2 (one range of the primary key) and
-- returns the addresses removed.
DELETE FROM userdata.operator_additions
WHERE user_id = $1 AND entity_id = $2
RETURNING chain_type, address
