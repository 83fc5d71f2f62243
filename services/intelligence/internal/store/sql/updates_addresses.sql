-- Address attribution changes (as updates_entities.sql for $1..$6), with the attribution as it
-- is now. Filters (null or '': any): $7 chain types, $8 addresses, $9 entity ids, $10 entity
-- types, $11 label (case-insensitive substring), $12 service (whether the address has an
-- operator entity or label now), $13 deposit services, $14 tag ids and $15 tag parameters (the
-- address carries such a tag now).
SELECT c.seq, c.at, c.status, c.key1, c.key2, a.entity_id, e.name, e.type, a.label, a.deposit_service_id, a.cluster_ids,
       (a.entity_id IS NOT NULL OR a.label <> ''), a.predicted_entity_id, pe.name, pe.type
FROM intel.change_log c
LEFT JOIN intel.addresses a ON a.chain_type = c.key1 AND a.address = c.key2
LEFT JOIN intel.entities e ON e.id = a.entity_id
LEFT JOIN intel.entities pe ON pe.id = a.predicted_entity_id
WHERE c.kind = 'address' AND (CASE WHEN $6 THEN c.seq < $1 ELSE c.seq > $1 END)
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($7::text[] IS NULL OR c.key1 = ANY($7))
  AND ($8::text[] IS NULL OR c.key2 = ANY($8))
  AND ($9::text[] IS NULL OR a.entity_id = ANY($9))
  AND ($10::text[] IS NULL OR e.type = ANY($10))
  AND ($11::text = '' OR strpos(lower(a.label), lower($11)) > 0)
  AND ($12::boolean IS NULL OR (a.entity_id IS NOT NULL OR a.label <> '') = $12)
  AND ($13::text[] IS NULL OR a.deposit_service_id = ANY($13))
  AND (($14::text[] IS NULL AND $15::text IS NULL) OR EXISTS (
        SELECT 1 FROM intel.address_tags at
        WHERE at.chain_type = c.key1 AND at.address = c.key2
          AND ($14::text[] IS NULL OR at.tag_id = ANY($14)) AND ($15::text IS NULL OR at.params = $15)))
ORDER BY CASE WHEN $6 THEN -c.seq ELSE c.seq END
LIMIT $5
