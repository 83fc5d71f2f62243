-- A key's snapshots from day $4 on, and the last one before it.
SELECT k.chain, k.address, k.token, d.day, d.block_number, d.balance::text
FROM unnest($1::text[], $2::text[], $3::text[], $4::date[]) AS k(chain, address, token, since)
CROSS JOIN LATERAL (
  (SELECT a.day, a.block_number, a.balance FROM balances.address_daily a
   WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day < k.since
   ORDER BY a.day DESC LIMIT 1)
  UNION ALL
  (SELECT a.day, a.block_number, a.balance FROM balances.address_daily a
   WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day >= k.since)
) d
