-- The risk seeds among some addresses of one chain type: $1 the chain type, $2 the addresses;
-- $3/$4 the entity types and the risk category each maps to, $5/$6 the tag ids and theirs
-- (app.RiskCategories). An address is a seed of a category when its attributed entity has a
-- type, or it carries a tag, of that category.
SELECT a.address, m.category
FROM intel.addresses a
JOIN intel.entities e ON e.id = a.entity_id
JOIN unnest($3::text[], $4::text[]) m(type, category) ON m.type = e.type
WHERE a.chain_type = $1 AND a.address = ANY($2::text[])
UNION
SELECT t.address, m.category
FROM intel.address_tags t
JOIN unnest($5::text[], $6::text[]) m(tag, category) ON m.tag = t.tag_id
WHERE t.chain_type = $1 AND t.address = ANY($2::text[])
ORDER BY 1, 2
