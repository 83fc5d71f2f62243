-- Drops the orphan marks of chain $1's blocks $2 (hashes) that a reorg names canonical; returns their hashes.
DELETE FROM transfers.orphaned_blocks WHERE chain = $1 AND block_hash = ANY($2) RETURNING block_hash
