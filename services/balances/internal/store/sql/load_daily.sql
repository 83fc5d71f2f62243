-- A key's snapshots from day $4 on, and the last one before it: the rows of address_daily and
-- the current row as its day's snapshot, per day the newest by block. stored says the snapshot
-- is a row of address_daily (a day the current row alone holds is stored nowhere else: it is
-- lost once the current row moves to another day unless written).
SELECT k.chain, k.address, k.token, d.day, d.block_number, d.balance::text, d.stored
FROM unnest($1::text[], $2::text[], $3::text[], $4::date[]) AS k(chain, address, token, since)
CROSS JOIN LATERAL (
  SELECT DISTINCT ON (u.day) u.day, u.block_number, u.balance, u.stored FROM (
    (SELECT a.day, a.block_number, a.balance, true AS stored FROM balances.address_daily a
     WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day < k.since
     ORDER BY a.day DESC LIMIT 1)
    UNION ALL
    (SELECT a.day, a.block_number, a.balance, true FROM balances.address_daily a
     WHERE a.chain = k.chain AND a.address = k.address AND a.token = k.token AND a.day >= k.since)
    UNION ALL
    (SELECT (c.block_time AT TIME ZONE 'UTC')::date, c.block_number, c.balance, false FROM balances.current c
     WHERE c.chain = k.chain AND c.address = k.address AND c.token = k.token)
  ) u
  ORDER BY u.day, u.block_number DESC, u.stored DESC
) d
