DELETE FROM balances.orphaned_blocks WHERE chain = $1 AND hash = ANY($2::text[])
