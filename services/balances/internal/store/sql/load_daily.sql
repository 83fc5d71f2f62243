-- A key's snapshots from day $4 on, and the last one before it: the rows of address_daily and
-- the current row as its day's snapshot, per day the newest by block.
SELECT k.chain, k.address, k.token, d.day, d.block_number, d.balance::text
FROM unnest($1::text[], $2::text[], $3::text[], $4::date[]) AS k(chain, address, token, since)
CROSS JOIN LATERAL (
  SELECT DISTINCT ON (u.day) u.day, u.block_number, u.balance FROM (
    (SELECT a.day, a.block_number, a.balance FROM balances.address_daily a
     WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day < k.since
     ORDER BY a.day DESC LIMIT 1)
    UNION ALL
    (SELECT a.day, a.block_number, a.balance FROM balances.address_daily a
     WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day >= k.since)
    UNION ALL
    (SELECT (c.block_time AT TIME ZONE 'UTC')::date, c.block_number, c.balance FROM balances.current c
     WHERE c.chain = k.chain AND c.address = k.address AND c.token = k.token)
  ) u
  ORDER BY u.day, u.block_number DESC
) d
