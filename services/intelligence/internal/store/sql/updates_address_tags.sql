-- Address tag changes (as updates_entities.sql), with the tag and the address's attribution as
-- they are now.
SELECT c.seq, c.at, c.status, c.key1, c.key2, c.key3, c.key4, t.label, t.rank, a.entity_id, e.name, e.type, a.label
FROM intel.change_log c
LEFT JOIN intel.tags t ON t.id = c.key3
LEFT JOIN intel.addresses a ON a.chain_type = c.key1 AND a.address = c.key2
LEFT JOIN intel.entities e ON e.id = a.entity_id
WHERE c.kind = 'address_tag' AND c.seq > $1 AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
ORDER BY c.seq
LIMIT $5
