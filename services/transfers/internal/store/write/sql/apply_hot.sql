-- An apply's second upserts, right before its commit: the rows every batch shares (an exchange's
-- or a type's hours and days, the chains' hours and days, busy addresses' days), whose locks it
-- holds only until the commit.
WITH gsides AS (SELECT * FROM apply_sides), gpairs AS (SELECT * FROM (SELECT f AS fg, t AS tg, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd
    FROM apply_pairs p CROSS JOIN LATERAL unnest(p.fg) f CROSS JOIN LATERAL unnest(p.tg) t) x WHERE fg <> tg AND fg NOT LIKE 'd:%' AND tg NOT LIKE 'd:%'),
rd AS (
  INSERT INTO transfers.addr_daily AS r (address, bucket, chain, token, token_id, in_n, in_usd, in_value, out_n, out_usd, out_value)
  SELECT address, day, chain, token, min(token_id), sum(in_n), sum(in_usd), sum(in_value),
         sum(out_n), sum(out_usd), sum(out_value)
  FROM (SELECT from_addr AS address, date_trunc('day', bucket, 'UTC') AS day, chain, token, token_id,
               0 AS in_n, 0 AS in_usd, 0 AS in_value, n AS out_n, usd AS out_usd, value AS out_value FROM apply_pairs
        UNION ALL
        SELECT to_addr, date_trunc('day', bucket, 'UTC'), chain, token, token_id, n, usd, value, 0, 0, 0 FROM apply_pairs) x
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (address, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, in_value = r.in_value + excluded.in_value,
    out_n = r.out_n + excluded.out_n, out_usd = r.out_usd + excluded.out_usd, out_value = r.out_value + excluded.out_value
),
rch AS (
  INSERT INTO transfers.chain_hourly AS r (bucket, chain, token, token_id, n, usd)
  SELECT date_trunc('hour', bucket, 'UTC'), chain, token, min(token_id), sum(n), sum(usd)
  FROM apply_pairs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
),
rcd AS (
  INSERT INTO transfers.chain_daily AS r (bucket, chain, token, token_id, n, usd)
  SELECT date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), sum(n), sum(usd)
  FROM apply_pairs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
),
gh AS (
  INSERT INTO transfers.grp_hourly AS r (grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd)
  SELECT grp, date_trunc('hour', bucket, 'UTC'), chain, token, min(token_id),
         sum(CASE WHEN i THEN n ELSE 0 END), sum(CASE WHEN i THEN usd ELSE 0 END),
         sum(CASE WHEN o THEN n ELSE 0 END), sum(CASE WHEN o THEN usd ELSE 0 END),
         sum(CASE WHEN o AND i THEN n ELSE 0 END), sum(CASE WHEN o AND i THEN usd ELSE 0 END)
  FROM gsides GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (grp, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, out_n = r.out_n + excluded.out_n,
    out_usd = r.out_usd + excluded.out_usd, self_n = r.self_n + excluded.self_n, self_usd = r.self_usd + excluded.self_usd
), gd AS (
  INSERT INTO transfers.grp_daily AS r (grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd)
  SELECT grp, date_trunc('day', bucket, 'UTC'), chain, token, min(token_id),
         sum(CASE WHEN i THEN n ELSE 0 END), sum(CASE WHEN i THEN usd ELSE 0 END),
         sum(CASE WHEN o THEN n ELSE 0 END), sum(CASE WHEN o THEN usd ELSE 0 END),
         sum(CASE WHEN o AND i THEN n ELSE 0 END), sum(CASE WHEN o AND i THEN usd ELSE 0 END)
  FROM gsides GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (grp, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, out_n = r.out_n + excluded.out_n,
    out_usd = r.out_usd + excluded.out_usd, self_n = r.self_n + excluded.self_n, self_usd = r.self_usd + excluded.self_usd
),
gph AS (
  INSERT INTO transfers.grp_pair_hourly AS r (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
  SELECT fg, tg, date_trunc('hour', bucket, 'UTC'), chain, token, min(token_id), sum(n), sum(usd)
  FROM gpairs GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_grp, to_grp, bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
), gpd AS (
  INSERT INTO transfers.grp_pair_daily AS r (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
  SELECT fg, tg, date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), sum(n), sum(usd)
  FROM gpairs GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_grp, to_grp, bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
)
SELECT 1
