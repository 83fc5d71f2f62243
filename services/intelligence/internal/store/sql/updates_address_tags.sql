-- Address tag changes (as updates_entities.sql for $1..$6), with the tag and the address's
-- attribution as they are now. Filters (null: any): $7 chain types, $8 addresses, $9 tag ids,
-- $10 tag parameters, $11 entity ids (the address's now), $12 categories (tags carry none
-- here, so a category filter selects none).
SELECT c.seq, c.at, c.status, c.key1, c.key2, c.key3, c.key4, t.label, t.rank, a.entity_id, e.name, e.type, a.label
FROM intel.change_log c
LEFT JOIN intel.tags t ON t.id = c.key3
LEFT JOIN intel.addresses a ON a.chain_type = c.key1 AND a.address = c.key2
LEFT JOIN intel.entities e ON e.id = a.entity_id
WHERE c.kind = 'address_tag' AND (CASE WHEN $6 THEN c.seq < $1 ELSE c.seq > $1 END)
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($7::text[] IS NULL OR c.key1 = ANY($7))
  AND ($8::text[] IS NULL OR c.key2 = ANY($8))
  AND ($9::text[] IS NULL OR c.key3 = ANY($9))
  AND ($10::text IS NULL OR c.key4 = $10)
  AND ($11::text[] IS NULL OR a.entity_id = ANY($11))
  AND ($12::text[] IS NULL OR NULL::text = ANY($12))
ORDER BY CASE WHEN $6 THEN -c.seq ELSE c.seq END
LIMIT $5
