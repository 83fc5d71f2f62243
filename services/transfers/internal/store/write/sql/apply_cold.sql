-- An apply's first upserts: the rows batches rarely share (pair_hourly, the entities' pair rows
-- and counterparties, blocks). Two applies at once overlap here and take turns only for
-- apply_hot. Each table's rows in key order, the tables in statement order: concurrent applies
-- cannot deadlock.
WITH ins AS (SELECT * FROM apply_rows), gsides AS (SELECT * FROM apply_sides),
rp AS (
  INSERT INTO transfers.pair_hourly AS r (from_addr, to_addr, bucket, chain, token, token_id, n, usd, value)
  SELECT from_addr, to_addr, bucket, chain, token, token_id, n, usd, value
  FROM apply_pairs ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (from_addr, to_addr, bucket, chain, token) DO UPDATE SET
    n = r.n + excluded.n, usd = r.usd + excluded.usd, value = r.value + excluded.value
),
ge AS (
  INSERT INTO transfers.entity_pair_rows AS r (grp, bucket, from_addr, to_addr, chain, token, token_id, side, n, usd, value, from_t, to_t, t_first, t_last, uid)
  SELECT grp, bucket, from_addr, to_addr, chain, token, token_id, CASE WHEN o AND i THEN 3 WHEN o THEN 1 ELSE 2 END,
         n, usd, value, transfers.type_group(fg), transfers.type_group(tg), tf, tl, CASE WHEN n = 1 AND tf IS NOT NULL THEN uid END
  FROM gsides WHERE grp LIKE 'e:%' ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (grp, bucket, from_addr, to_addr, chain, token) DO UPDATE SET
    side = excluded.side, n = r.n + excluded.n, usd = r.usd + excluded.usd, value = r.value + excluded.value,
    t_first = CASE WHEN r.t_first IS NULL OR excluded.t_first IS NULL THEN NULL ELSE least(r.t_first, excluded.t_first) END,
    t_last = CASE WHEN r.t_last IS NULL OR excluded.t_last IS NULL THEN NULL ELSE greatest(r.t_last, excluded.t_last) END
),
gc AS (
  INSERT INTO transfers.grp_cp AS r (grp, chain, cp, in_n, in_usd, in_value, out_n, out_usd, out_value)
  SELECT grp, chain, CASE WHEN o THEN to_addr ELSE from_addr END,
         sum(CASE WHEN i THEN n ELSE 0 END), sum(CASE WHEN i THEN usd ELSE 0 END),
         sum(CASE WHEN i THEN value ELSE 0 END), sum(CASE WHEN o THEN n ELSE 0 END),
         sum(CASE WHEN o THEN usd ELSE 0 END), sum(CASE WHEN o THEN value ELSE 0 END)
  FROM gsides WHERE grp LIKE 'e:%' AND o <> i GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (grp, chain, cp) DO UPDATE SET
    in_n = r.in_n + excluded.in_n, in_usd = r.in_usd + excluded.in_usd, in_value = r.in_value + excluded.in_value,
    out_n = r.out_n + excluded.out_n, out_usd = r.out_usd + excluded.out_usd, out_value = r.out_value + excluded.out_value
),
blk AS (
  INSERT INTO transfers.blocks (chain, block_number, block_hash, block_time)
  SELECT DISTINCT chain, block_number, block_hash, block_time FROM ins ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING
)
SELECT 1
