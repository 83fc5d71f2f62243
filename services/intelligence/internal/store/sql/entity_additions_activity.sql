-- The activity a caller's additions to operator entity $1 ($2, $3: chain types and normalized
-- addresses) add to the entity's (entity_activity.sql), so that each transfer touching the
-- entity's attributed addresses or the additions counts once. Additions attributed to the entity
-- already are left out; the others are returned (x). Their per-address activity counts a
-- transfer between two additions twice (out and in) and one between an addition and an address
-- of the entity once more than the entity's figure already does, so those pairs are subtracted
-- once: each addition's outgoing pairs (primary-key range) into an addition or the entity, and
-- its incoming pairs (index on (chain_type, to_addr)) from the entity; the other end of each is
-- one primary-key probe of intel.addresses. The read grows with the additions' pairs, not with
-- the entity's addresses.
WITH x AS MATERIALIZED (
    SELECT DISTINCT u.ct AS chain_type, u.addr AS address
    FROM unnest($2::text[], $3::text[]) u(ct, addr)
    WHERE NOT EXISTS (
        SELECT 1 FROM intel.addresses a WHERE a.chain_type = u.ct AND a.address = u.addr AND a.entity_id = $1
    )
), act AS (
    SELECT COALESCE(sum(a.volume_usd), 0) AS usd, COALESCE(sum(a.transfer_count), 0) AS cnt,
           COALESCE(min(a.first_ms), 0) AS first_ms, COALESCE(max(a.last_ms), 0) AS last_ms
    FROM x
    JOIN intel.address_activity a ON a.chain_type = x.chain_type AND a.address = x.address
), shared AS (
    SELECT COALESCE(sum(s.usd), 0) AS usd, COALESCE(sum(s.cnt), 0) AS cnt
    FROM (
        SELECT p.volume_usd AS usd, p.transfer_count AS cnt
        FROM x
        JOIN intel.pair_activity p ON p.chain_type = x.chain_type AND p.from_addr = x.address
        WHERE EXISTS (SELECT 1 FROM x y WHERE y.chain_type = p.chain_type AND y.address = p.to_addr)
           OR EXISTS (
               SELECT 1 FROM intel.addresses a
               WHERE a.chain_type = p.chain_type AND a.address = p.to_addr AND a.entity_id = $1
           )
        UNION ALL
        SELECT p.volume_usd, p.transfer_count
        FROM x
        JOIN intel.pair_activity p ON p.chain_type = x.chain_type AND p.to_addr = x.address
        WHERE EXISTS (
            SELECT 1 FROM intel.addresses a
            WHERE a.chain_type = p.chain_type AND a.address = p.from_addr AND a.entity_id = $1
        )
    ) s
)
SELECT (SELECT COALESCE(array_agg(x.chain_type ORDER BY x.chain_type, x.address), '{}') FROM x),
       (SELECT COALESCE(array_agg(x.address ORDER BY x.chain_type, x.address), '{}') FROM x),
       act.usd - shared.usd, act.cnt - shared.cnt, act.first_ms, act.last_ms
FROM act CROSS JOIN shared
