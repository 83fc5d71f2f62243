-- The tags of many addresses: $1 chain types and $2 addresses, parallel arrays.
SELECT DISTINCT at.chain_type, at.address, t.id, t.label, t.rank, t.disable_page, t.exclude_entities, t.chain, at.params
FROM intel.address_tags at
JOIN intel.tags t ON t.id = at.tag_id
WHERE (at.chain_type, at.address) IN (SELECT * FROM unnest($1::text[], $2::text[]))
ORDER BY at.chain_type, at.address, t.rank, t.id, at.params
