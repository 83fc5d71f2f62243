-- The times of chain $1's blocks of hashes $2 (a scan of the chain's blocks: for blocks named without their number).
SELECT DISTINCT block_time FROM transfers.blocks WHERE chain = $1 AND block_hash = ANY($2)
