DELETE FROM market.orphaned_blocks WHERE chain = $1 AND block_hash = ANY($2::text[])
