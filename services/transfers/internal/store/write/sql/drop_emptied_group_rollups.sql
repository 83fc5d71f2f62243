-- Deletes the group rollup rows of sub_pairs (with sub_memb's groups) that a subtraction emptied.
WITH gsrc AS (SELECT p.*, coalesce(mf.g, '{}') AS fg, coalesce(mt.g, '{}') AS tg FROM sub_pairs p
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM sub_memb GROUP BY address) mf ON mf.address = p.from_addr
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM sub_memb GROUP BY address) mt ON mt.address = p.to_addr), gsides AS (SELECT * FROM (SELECT x.g AS grp, p.from_addr, p.to_addr, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd, p.value,
         x.g = ANY(p.fg) AS o, x.g = ANY(p.tg) AS i, p.fg, p.tg, NULL::timestamptz AS tf, NULL::timestamptz AS tl, NULL::uuid AS uid
  FROM gsrc p CROSS JOIN LATERAL (SELECT DISTINCT g FROM unnest(p.fg || p.tg) g) x) y), gpairs AS (SELECT * FROM (SELECT f AS fg, t AS tg, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd
    FROM gsrc p CROSS JOIN LATERAL unnest(p.fg) f CROSS JOIN LATERAL unnest(p.tg) t) x WHERE fg <> tg AND fg NOT LIKE 'd:%' AND tg NOT LIKE 'd:%'),
d1 AS (DELETE FROM transfers.grp_hourly r USING (SELECT DISTINCT grp, bucket, chain, token FROM gsides) k
  WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.in_n = 0 AND r.out_n = 0),
d2 AS (DELETE FROM transfers.grp_daily r USING (SELECT DISTINCT grp, date_trunc('day', bucket, 'UTC') bucket, chain, token FROM gsides) k
  WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.in_n = 0 AND r.out_n = 0),
d3 AS (DELETE FROM transfers.grp_pair_hourly r USING (SELECT DISTINCT fg, tg, bucket, chain, token FROM gpairs) k
  WHERE r.from_grp = k.fg AND r.to_grp = k.tg AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.n = 0),
d4 AS (DELETE FROM transfers.grp_pair_daily r USING (SELECT DISTINCT fg, tg, date_trunc('day', bucket, 'UTC') bucket, chain, token FROM gpairs) k
  WHERE r.from_grp = k.fg AND r.to_grp = k.tg AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.n = 0),
d5 AS (DELETE FROM transfers.entity_pair_rows r USING (SELECT grp, bucket, from_addr, to_addr, chain, token FROM gsides WHERE grp LIKE 'e:%') k
  WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.from_addr = k.from_addr AND r.to_addr = k.to_addr AND r.chain = k.chain
    AND r.token = k.token AND r.n = 0),
d6 AS (DELETE FROM transfers.grp_cp r USING (SELECT DISTINCT grp, chain, CASE WHEN o THEN to_addr ELSE from_addr END cp
    FROM gsides WHERE grp LIKE 'e:%' AND o <> i) k
  WHERE r.grp = k.grp AND r.chain = k.chain AND r.cp = k.cp AND r.in_n = 0 AND r.out_n = 0)
SELECT 1
