-- Address attribution changes (as updates_entities_desc.sql for $1..$5), with the attribution as it
-- is now. Filters (null or '': any): $6 chain types, $7 addresses, $8 entity ids, $9 entity
-- types, $10 label (case-insensitive substring), $11 service (whether the address has an
-- operator entity or label now), $12 deposit services, $13 tag ids and $14 tag parameters (the
-- address carries such a tag now).
SELECT c.seq, c.at, c.status, c.key1, c.key2, a.entity_id, e.name, e.type, a.label, a.deposit_service_id, a.cluster_ids,
       (a.entity_id IS NOT NULL OR a.label <> ''), a.predicted_entity_id, pe.name, pe.type
FROM intel.change_log c
LEFT JOIN intel.addresses a ON a.chain_type = c.key1 AND a.address = c.key2
LEFT JOIN intel.entities e ON e.id = a.entity_id
LEFT JOIN intel.entities pe ON pe.id = a.predicted_entity_id
WHERE c.kind = 'address' AND c.seq < $1
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($6::text[] IS NULL OR c.key1 = ANY($6))
  AND ($7::text[] IS NULL OR c.key2 = ANY($7))
  AND ($8::text[] IS NULL OR a.entity_id = ANY($8))
  AND ($9::text[] IS NULL OR e.type = ANY($9))
  AND ($10::text = '' OR strpos(lower(a.label), lower($10)) > 0)
  AND ($11::boolean IS NULL OR (a.entity_id IS NOT NULL OR a.label <> '') = $11)
  AND ($12::text[] IS NULL OR a.deposit_service_id = ANY($12))
  AND (($13::text[] IS NULL AND $14::text IS NULL) OR EXISTS (
        SELECT 1 FROM intel.address_tags at
        WHERE at.chain_type = c.key1 AND at.address = c.key2
          AND ($13::text[] IS NULL OR at.tag_id = ANY($13)) AND ($14::text IS NULL OR at.params = $14)))
ORDER BY c.seq DESC
LIMIT $5
