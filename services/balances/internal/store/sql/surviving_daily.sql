-- The snapshots a key has from day $4 on, rebuilt from its surviving observations (none of them
-- stored yet).
SELECT k.chain, k.address, k.token, d.day, d.block_number, d.balance::text, false
FROM unnest($1::text[], $2::text[], $3::text[], $4::date[]) AS k(chain, address, token, since)
CROSS JOIN LATERAL (
  SELECT DISTINCT ON ((o.block_time AT TIME ZONE 'UTC')::date)
         (o.block_time AT TIME ZONE 'UTC')::date AS day, o.block_number, o.balance
  FROM balances.observations o
  WHERE o.chain = k.chain AND o.address = k.address AND o.token = k.token
    AND NOT EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = o.chain AND b.hash = o.block_hash)
    AND o.block_time >= k.since::timestamp AT TIME ZONE 'UTC'
  ORDER BY (o.block_time AT TIME ZONE 'UTC')::date, o.block_number DESC
) d
