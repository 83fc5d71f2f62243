-- The times of chain $1's blocks of hashes $2 and numbers $3.
SELECT DISTINCT block_time FROM transfers.blocks WHERE chain = $1 AND block_hash = ANY($2) AND block_number = ANY($3)
