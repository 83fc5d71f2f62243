-- Subtracts the pair rows of sub_pairs (a reorg's removed transfers) from the address and chain
-- rollups; the live groups' rollups are subtracted by group_rollups.sql with the sign -1.
WITH rp AS (
  INSERT INTO transfers.pair_hourly AS r (from_addr, to_addr, bucket, chain, token, token_id, n, usd, value)
  SELECT from_addr, to_addr, bucket, chain, token, token_id, -1 * n, -1 * usd, -1 * value
  FROM sub_pairs ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_addr, to_addr, bucket, chain, token) DO UPDATE SET
    n = r.n + excluded.n, usd = r.usd + excluded.usd, value = r.value + excluded.value
), rd AS (
  INSERT INTO transfers.addr_daily AS r (address, bucket, chain, token, token_id, in_n, in_usd, in_value, out_n, out_usd, out_value)
  SELECT address, day, chain, token, min(token_id), -1 * sum(in_n), -1 * sum(in_usd), -1 * sum(in_value),
         -1 * sum(out_n), -1 * sum(out_usd), -1 * sum(out_value)
  FROM (SELECT from_addr AS address, date_trunc('day', bucket, 'UTC') AS day, chain, token, token_id,
               0 AS in_n, 0 AS in_usd, 0 AS in_value, n AS out_n, usd AS out_usd, value AS out_value FROM sub_pairs
        UNION ALL
        SELECT to_addr, date_trunc('day', bucket, 'UTC'), chain, token, token_id, n, usd, value, 0, 0, 0 FROM sub_pairs) x
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (address, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, in_value = r.in_value + excluded.in_value,
    out_n = r.out_n + excluded.out_n, out_usd = r.out_usd + excluded.out_usd, out_value = r.out_value + excluded.out_value
), rch AS (
  INSERT INTO transfers.chain_hourly AS r (bucket, chain, token, token_id, n, usd)
  SELECT date_trunc('hour', bucket, 'UTC'), chain, token, min(token_id), -1 * sum(n), -1 * sum(usd)
  FROM sub_pairs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
), rcd AS (
  INSERT INTO transfers.chain_daily AS r (bucket, chain, token, token_id, n, usd)
  SELECT date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), -1 * sum(n), -1 * sum(usd)
  FROM sub_pairs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
)
SELECT 1
