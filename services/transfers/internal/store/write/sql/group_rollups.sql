-- Adds ($1 = 1) or subtracts ($1 = -1) the pair rows of sub_pairs to or from the group rollups,
-- with the groups sub_memb gives their addresses. A subtraction keeps a pair row's time bounds
-- and never sets its uid (write/groups.go). The sign only scales the sums and picks those two
-- columns, so both signs plan alike. grp_cp's sums are taken in a subquery and signed outside
-- it: signed inside, the six products tip the planner from hashing the rows and sorting the
-- groups to sorting every row before grouping them.
WITH gsrc AS (SELECT p.*, coalesce(mf.g, '{}') AS fg, coalesce(mt.g, '{}') AS tg FROM sub_pairs p
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM sub_memb GROUP BY address) mf ON mf.address = p.from_addr
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM sub_memb GROUP BY address) mt ON mt.address = p.to_addr), gsides AS (SELECT * FROM (SELECT x.g AS grp, p.from_addr, p.to_addr, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd, p.value,
         x.g = ANY(p.fg) AS o, x.g = ANY(p.tg) AS i, p.fg, p.tg, NULL::timestamptz AS tf, NULL::timestamptz AS tl, NULL::uuid AS uid
  FROM gsrc p CROSS JOIN LATERAL (SELECT DISTINCT g FROM unnest(p.fg || p.tg) g) x) y), gpairs AS (SELECT * FROM (SELECT f AS fg, t AS tg, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd
    FROM gsrc p CROSS JOIN LATERAL unnest(p.fg) f CROSS JOIN LATERAL unnest(p.tg) t) x WHERE fg <> tg AND fg NOT LIKE 'd:%' AND tg NOT LIKE 'd:%'),
gh AS (
  INSERT INTO transfers.grp_hourly AS r (grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd)
  SELECT grp, date_trunc('hour', bucket, 'UTC'), chain, token, min(token_id),
         $1::int * sum(CASE WHEN i THEN n ELSE 0 END), $1::int * sum(CASE WHEN i THEN usd ELSE 0 END),
         $1::int * sum(CASE WHEN o THEN n ELSE 0 END), $1::int * sum(CASE WHEN o THEN usd ELSE 0 END),
         $1::int * sum(CASE WHEN o AND i THEN n ELSE 0 END), $1::int * sum(CASE WHEN o AND i THEN usd ELSE 0 END)
  FROM gsides GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (grp, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, out_n = r.out_n + excluded.out_n,
    out_usd = r.out_usd + excluded.out_usd, self_n = r.self_n + excluded.self_n, self_usd = r.self_usd + excluded.self_usd
), gd AS (
  INSERT INTO transfers.grp_daily AS r (grp, bucket, chain, token, token_id, in_n, in_usd, out_n, out_usd, self_n, self_usd)
  SELECT grp, date_trunc('day', bucket, 'UTC'), chain, token, min(token_id),
         $1::int * sum(CASE WHEN i THEN n ELSE 0 END), $1::int * sum(CASE WHEN i THEN usd ELSE 0 END),
         $1::int * sum(CASE WHEN o THEN n ELSE 0 END), $1::int * sum(CASE WHEN o THEN usd ELSE 0 END),
         $1::int * sum(CASE WHEN o AND i THEN n ELSE 0 END), $1::int * sum(CASE WHEN o AND i THEN usd ELSE 0 END)
  FROM gsides GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (grp, bucket, chain, token) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, out_n = r.out_n + excluded.out_n,
    out_usd = r.out_usd + excluded.out_usd, self_n = r.self_n + excluded.self_n, self_usd = r.self_usd + excluded.self_usd
),
gph AS (
  INSERT INTO transfers.grp_pair_hourly AS r (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
  SELECT fg, tg, date_trunc('hour', bucket, 'UTC'), chain, token, min(token_id), $1::int * sum(n), $1::int * sum(usd)
  FROM gpairs GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_grp, to_grp, bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
), gpd AS (
  INSERT INTO transfers.grp_pair_daily AS r (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
  SELECT fg, tg, date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), $1::int * sum(n), $1::int * sum(usd)
  FROM gpairs GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_grp, to_grp, bucket, chain, token) DO UPDATE SET n = r.n + excluded.n, usd = r.usd + excluded.usd
),
ge AS (
  INSERT INTO transfers.entity_pair_rows AS r (grp, bucket, from_addr, to_addr, chain, token, token_id, side, n, usd, value, from_t, to_t, t_first, t_last, uid)
  SELECT grp, bucket, from_addr, to_addr, chain, token, token_id, CASE WHEN o AND i THEN 3 WHEN o THEN 1 ELSE 2 END,
         $1::int * n, $1::int * usd, $1::int * value, transfers.type_group(fg), transfers.type_group(tg), tf, tl,
         CASE WHEN $1::int > 0 AND n = 1 AND tf IS NOT NULL THEN uid END
  FROM gsides WHERE grp LIKE 'e:%' ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (grp, bucket, from_addr, to_addr, chain, token) DO UPDATE SET
    side = excluded.side, n = r.n + excluded.n, usd = r.usd + excluded.usd, value = r.value + excluded.value,
    t_first = CASE WHEN $1::int < 0 THEN r.t_first WHEN r.t_first IS NULL OR excluded.t_first IS NULL THEN NULL
                   ELSE least(r.t_first, excluded.t_first) END,
    t_last = CASE WHEN $1::int < 0 THEN r.t_last WHEN r.t_last IS NULL OR excluded.t_last IS NULL THEN NULL
                  ELSE greatest(r.t_last, excluded.t_last) END
), gc AS (
  INSERT INTO transfers.grp_cp AS r (grp, chain, cp, in_n, in_usd, in_value, out_n, out_usd, out_value)
  SELECT grp, chain, cp, $1::int * in_n, $1::int * in_usd, $1::int * in_value, $1::int * out_n, $1::int * out_usd, $1::int * out_value
  FROM (SELECT grp, chain, CASE WHEN o THEN to_addr ELSE from_addr END AS cp,
               sum(CASE WHEN i THEN n ELSE 0 END) AS in_n, sum(CASE WHEN i THEN usd ELSE 0 END) AS in_usd,
               sum(CASE WHEN i THEN value ELSE 0 END) AS in_value, sum(CASE WHEN o THEN n ELSE 0 END) AS out_n,
               sum(CASE WHEN o THEN usd ELSE 0 END) AS out_usd, sum(CASE WHEN o THEN value ELSE 0 END) AS out_value
        FROM gsides WHERE grp LIKE 'e:%' AND o <> i GROUP BY 1, 2, 3 ORDER BY 1, 2, 3) s
  ORDER BY 1, 2, 3
  ON CONFLICT (grp, chain, cp) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, in_value = r.in_value + excluded.in_value,
    out_n = r.out_n + excluded.out_n, out_usd = r.out_usd + excluded.out_usd, out_value = r.out_value + excluded.out_value
) SELECT 1
