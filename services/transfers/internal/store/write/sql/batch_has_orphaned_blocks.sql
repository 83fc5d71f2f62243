-- Whether any block of a batch (chains $1, block hashes $2) is marked orphaned.
SELECT EXISTS (SELECT 1 FROM transfers.orphaned_blocks o
    JOIN unnest($1::text[], $2::text[]) b(chain, hash) ON o.chain = b.chain AND o.block_hash = b.hash)
