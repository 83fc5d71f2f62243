INSERT INTO balances.orphaned_blocks (chain, hash)
SELECT $1, h FROM unnest($2::text[]) AS h
ON CONFLICT DO NOTHING
