-- Day-over-day changes of the snapshots of a set of addresses, summed per (chain, token, day).
SELECT chain, token, day, sum(delta)::text FROM (
  SELECT a.chain, a.token, a.day,
         a.balance - coalesce(lag(a.balance) OVER (PARTITION BY a.chain, a.address, a.token ORDER BY a.day), 0) AS delta
  FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
  JOIN unnest($3::text[]) AS ch(chain) ON balances.chain_type(ch.chain) = r.chain_type
  JOIN balances.address_daily a ON a.chain = ch.chain AND a.address = r.address
) x
GROUP BY 1, 2, 3
