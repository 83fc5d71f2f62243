-- The addresses a reorg took transfers of back ($1 chain types, $2 addresses, $3 first and $4
-- last time of those transfers) whose stored first or last time may be one of theirs, with
-- their surviving journal transfers' count (all but the settled ones) and settled activity.
SELECT a.chain_type, a.address, a.first_ms, a.last_ms, a.first_ms >= d.first_ms, a.last_ms <= d.last_ms,
       a.transfer_count - COALESCE(s.transfer_count, 0), COALESCE(s.transfer_count, 0),
       COALESCE(s.first_ms, 0), COALESCE(s.last_ms, 0)
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) d(ct, addr, first_ms, last_ms)
JOIN intel.address_activity a ON a.chain_type = d.ct AND a.address = d.addr
LEFT JOIN intel.settled_activity s ON s.chain_type = d.ct AND s.address = d.addr
WHERE a.first_ms >= d.first_ms OR a.last_ms <= d.last_ms
ORDER BY 1, 2
