-- Forgets blocks canonical again; returns those that were orphaned (their observations survive again).
DELETE FROM balances.orphaned_blocks WHERE chain = $1 AND hash = ANY($2::text[])
RETURNING hash
