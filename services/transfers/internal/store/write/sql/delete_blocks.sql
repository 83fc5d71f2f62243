-- Forgets chain $1's blocks $2 (hashes).
DELETE FROM transfers.blocks WHERE chain = $1 AND block_hash = ANY($2)
