-- Marks chain $1's blocks $2 (hashes) orphaned.
INSERT INTO transfers.orphaned_blocks (chain, block_hash)
    SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING
