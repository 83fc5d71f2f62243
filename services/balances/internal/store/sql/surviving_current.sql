-- The newest surviving observation of each key (void: its block hash is orphaned).
SELECT k.chain, k.address, k.token, o.block_number, o.block_hash, o.block_time, o.balance::text, o.owner, o.kind
FROM unnest($1::text[], $2::text[], $3::text[]) AS k(chain, address, token)
CROSS JOIN LATERAL (
  SELECT * FROM balances.observations o
  WHERE o.chain = k.chain AND o.address = k.address AND o.token = k.token
    AND NOT EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = o.chain AND b.hash = o.block_hash)
  ORDER BY o.block_number DESC LIMIT 1
) o
