INSERT INTO market.orphaned_blocks (chain, block_hash) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING
