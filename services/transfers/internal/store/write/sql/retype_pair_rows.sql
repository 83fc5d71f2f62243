-- Sets the types (from_t, to_t) of the other entity groups' pair rows of sub_pairs, written while
-- the type groups $1 were not live, to what they are now.
WITH gsrc AS (SELECT p.*, coalesce(mf.g, '{}') AS fg, coalesce(mt.g, '{}') AS tg FROM sub_pairs p
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM sub_memb GROUP BY address) mf ON mf.address = p.from_addr
  LEFT JOIN (SELECT address, array_agg(grp) AS g FROM sub_memb GROUP BY address) mt ON mt.address = p.to_addr),
  gsides AS (SELECT * FROM (SELECT x.g AS grp, p.from_addr, p.to_addr, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd, p.value,
         x.g = ANY(p.fg) AS o, x.g = ANY(p.tg) AS i, p.fg, p.tg, NULL::timestamptz AS tf, NULL::timestamptz AS tl, NULL::uuid AS uid
  FROM gsrc p CROSS JOIN LATERAL (SELECT DISTINCT g FROM unnest(p.fg || p.tg) g) x) y WHERE grp LIKE 'e:%' AND grp <> ALL($1::text[])),
  k AS (SELECT grp, bucket, from_addr, to_addr, chain, token, transfers.type_group(fg) AS ft, transfers.type_group(tg) AS tt FROM gsides)
UPDATE transfers.entity_pair_rows r SET from_t = k.ft, to_t = k.tt FROM k
WHERE r.grp = k.grp AND r.bucket = k.bucket AND r.from_addr = k.from_addr AND r.to_addr = k.to_addr AND r.chain = k.chain
  AND r.token = k.token AND (r.from_t <> k.ft OR r.to_t <> k.tt)
