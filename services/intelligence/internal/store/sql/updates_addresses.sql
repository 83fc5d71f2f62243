-- Address attribution changes (as updates_entities.sql), with the attribution as it is now.
SELECT c.seq, c.at, c.status, c.key1, c.key2, a.entity_id, e.name, e.type, a.label, a.deposit_service_id, a.cluster_ids
FROM intel.change_log c
LEFT JOIN intel.addresses a ON a.chain_type = c.key1 AND a.address = c.key2
LEFT JOIN intel.entities e ON e.id = a.entity_id
WHERE c.kind = 'address' AND c.seq > $1 AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
ORDER BY c.seq
LIMIT $5
