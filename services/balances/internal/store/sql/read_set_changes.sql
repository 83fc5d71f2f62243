-- Day-over-day changes of the snapshots of a set of addresses, summed per (chain, token, day).
SELECT chain, token, day, sum(delta)::text FROM (
  SELECT a.chain, a.token, a.day,
         a.balance - coalesce(lag(a.balance) OVER (PARTITION BY a.chain, a.address, a.token ORDER BY a.day), 0) AS delta
  FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
  JOIN balances.address_daily a ON a.address = r.address
  WHERE a.chain = ANY($3::text[]) AND balances.chain_type(a.chain) = r.chain_type
) x
GROUP BY 1, 2, 3
