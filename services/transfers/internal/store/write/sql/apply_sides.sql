-- Expands apply_pairs into apply_sides: one row per pair row and group of either side.
INSERT INTO apply_sides SELECT * FROM (SELECT x.g AS grp, p.from_addr, p.to_addr, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd, p.value,
         x.g = ANY(p.fg) AS o, x.g = ANY(p.tg) AS i, p.fg, p.tg, p.tf, p.tl, p.uid
  FROM apply_pairs p CROSS JOIN LATERAL (SELECT DISTINCT g FROM unnest(p.fg || p.tg) g) x) y
