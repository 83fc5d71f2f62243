-- Address tag changes (as updates_entities_desc.sql for $1..$5), with the tag and the address's
-- attribution as they are now. Filters (null: any): $6 chain types, $7 addresses, $8 tag ids,
-- $9 tag parameters, $10 entity ids (the address's now), $11 categories (tags carry none
-- here, so a category filter selects none).
SELECT c.seq, c.at, c.status, c.key1, c.key2, c.key3, c.key4, t.label, t.rank, a.entity_id, e.name, e.type, a.label
FROM intel.change_log c
LEFT JOIN intel.tags t ON t.id = c.key3
LEFT JOIN intel.addresses a ON a.chain_type = c.key1 AND a.address = c.key2
LEFT JOIN intel.entities e ON e.id = a.entity_id
WHERE c.kind = 'address_tag' AND c.seq < $1
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($6::text[] IS NULL OR c.key1 = ANY($6))
  AND ($7::text[] IS NULL OR c.key2 = ANY($7))
  AND ($8::text[] IS NULL OR c.key3 = ANY($8))
  AND ($9::text IS NULL OR c.key4 = $9)
  AND ($10::text[] IS NULL OR a.entity_id = ANY($10))
  AND ($11::text[] IS NULL OR NULL::text = ANY($11))
ORDER BY c.seq DESC
LIMIT $5
