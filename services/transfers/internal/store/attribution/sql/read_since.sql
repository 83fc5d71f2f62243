-- readSince: the change log past a cache's position (at most a limit of entries), and the
-- attributions of the keys not cached and of every cached key the log names, of one snapshot.
-- Parameters: chain types, addresses, whether each is missing from the cache, the cache's
-- position, the limit. COLLATE "C": the address column's collation, so the comparison is a
-- memcmp, as in its index.
WITH l AS (SELECT pruned, coalesce((SELECT max(seq) FROM transfers.attribution_changes), pruned) AS top
    FROM transfers.attribution_log),
  ch AS MATERIALIZED (SELECT seq, chain_type, address FROM transfers.attribution_changes WHERE seq > $4 ORDER BY seq LIMIT $5),
  k AS (SELECT k.ct, k.addr FROM unnest($1::text[], $2::text[], $3::bool[]) k(ct, addr, miss)
    WHERE k.miss OR EXISTS (SELECT 1 FROM ch WHERE ch.chain_type = k.ct AND ch.address = k.addr COLLATE "C"))
SELECT 0 AS kind, l.pruned, l.top, NULL::text, NULL::text, NULL::jsonb, NULL::text, NULL::jsonb, NULL::text, NULL::boolean,
  NULL::bigint, NULL::timestamptz FROM l
UNION ALL
SELECT 1, ch.seq, NULL, ch.chain_type, ch.address, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM ch
UNION ALL
SELECT 2, NULL, NULL, a.chain_type, a.address, a.entity, a.label, a.predicted, a.deposit_service_id, a.is_contract,
  a.version, a.updated_at
FROM k JOIN transfers.attributions a ON a.chain_type = k.ct AND a.address = k.addr COLLATE "C"
