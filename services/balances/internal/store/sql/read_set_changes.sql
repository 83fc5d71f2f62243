-- Day-over-day changes of the snapshots of a set of addresses, summed per (chain, token, day). A
-- key's snapshots are its address_daily rows and its current row (its day's snapshot), per day
-- the newest by block.
SELECT chain, token, day, sum(delta)::text FROM (
  SELECT s.chain, s.token, s.day,
         s.balance - coalesce(lag(s.balance) OVER (PARTITION BY s.chain, s.address, s.token ORDER BY s.day), 0) AS delta
  FROM (
    SELECT DISTINCT ON (x.chain, x.address, x.token, x.day) x.chain, x.address, x.token, x.day, x.balance FROM (
      SELECT a.chain, a.address, a.token, a.day, a.block_number, a.balance
      FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
      JOIN balances.address_daily a ON a.address = r.address
      WHERE a.chain = ANY($3::text[]) AND balances.chain_type(a.chain) = r.chain_type
      UNION ALL
      SELECT c.chain, c.address, c.token, (c.block_time AT TIME ZONE 'UTC')::date, c.block_number, c.balance
      FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
      JOIN balances.current c ON c.address = r.address
      WHERE c.chain = ANY($3::text[]) AND balances.chain_type(c.chain) = r.chain_type
    ) x
    ORDER BY x.chain, x.address, x.token, x.day, x.block_number DESC
  ) s
) y
GROUP BY 1, 2, 3
