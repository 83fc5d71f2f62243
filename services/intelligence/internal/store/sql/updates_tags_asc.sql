-- Tag changes (as updates_entities_asc.sql for $1..$5), with the tag as it is now and how many
-- addresses and entities carry it; $6 tag ids and $7 categories (null: any). Tags carry no
-- category here (category is null), so a category filter selects none.
SELECT c.seq, c.at, c.status, c.key1, t.label, t.rank,
       (SELECT count(DISTINCT (at.chain_type, at.address)) FROM intel.address_tags at WHERE at.tag_id = c.key1),
       (SELECT count(DISTINCT a.entity_id) FROM intel.address_tags at
          JOIN intel.addresses a ON a.chain_type = at.chain_type AND a.address = at.address
          WHERE at.tag_id = c.key1 AND a.entity_id IS NOT NULL)
FROM intel.change_log c
LEFT JOIN intel.tags t ON t.id = c.key1
WHERE c.kind = 'tag' AND c.seq > $1
  AND c.at >= $2 AND c.at <= $3 AND ($4 = '' OR c.status = $4)
  AND ($6::text[] IS NULL OR c.key1 = ANY($6))
  AND ($7::text[] IS NULL OR NULL::text = ANY($7))
ORDER BY c.seq
LIMIT $5
