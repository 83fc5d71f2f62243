-- Which of a batch's blocks ($1 chains, $2 block hashes, parallel arrays) are orphaned.
SELECT o.chain, o.block_hash
FROM unnest($1::text[], $2::text[]) AS b(chain, block_hash)
JOIN market.orphaned_blocks o ON o.chain = b.chain AND o.block_hash = b.block_hash
