-- A cluster's members and the sums of their activity (as EntityActivity for an entity).
SELECT a.chain_type, a.address, COALESCE(act.volume_usd, 0), COALESCE(act.transfer_count, 0),
       COALESCE(act.first_ms, 0), COALESCE(act.last_ms, 0)
FROM intel.addresses a
LEFT JOIN intel.address_activity act ON act.chain_type = a.chain_type AND act.address = a.address
WHERE a.cluster_ids @> ARRAY[$1::text] AND a.cluster_ids <> '{}'
ORDER BY a.chain_type, a.address
