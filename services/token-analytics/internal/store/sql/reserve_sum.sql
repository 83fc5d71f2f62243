-- The sum of the newest exact balance, in a block not orphaned, of each address $3 of the token
-- $2 on chain $1.
SELECT coalesce(sum(balance), 0)::text FROM (
    SELECT DISTINCT ON (r.address) r.balance
    FROM market.reserve_balances r
    WHERE r.chain = $1 AND r.token = $2 AND r.address = ANY($3::text[])
      AND NOT EXISTS (SELECT 1 FROM market.orphaned_blocks o WHERE o.chain = r.chain AND o.block_hash = r.block_hash)
    ORDER BY r.address, r.block_number DESC
) latest
