-- An operator entity's activity: each transfer touching its attributed addresses once. The sum
-- of their per-address activity counts a transfer between two of them twice (out and in), so
-- the entity's internal figure (those transfers, intel.entity_internal) is subtracted once.
SELECT s.n, s.usd - COALESCE(i.volume_usd, 0), s.cnt - COALESCE(i.transfer_count, 0), s.first_ms, s.last_ms
FROM (
    SELECT count(*) AS n, COALESCE(sum(act.volume_usd), 0) AS usd, COALESCE(sum(act.transfer_count), 0) AS cnt,
           COALESCE(min(act.first_ms), 0) AS first_ms, COALESCE(max(act.last_ms), 0) AS last_ms
    FROM intel.addresses a
    LEFT JOIN intel.address_activity act ON act.chain_type = a.chain_type AND act.address = a.address
    WHERE a.entity_id = $1
) s
LEFT JOIN intel.entity_internal i ON i.entity_id = $1
