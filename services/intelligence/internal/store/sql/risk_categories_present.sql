-- The risk categories of which at least one seed exists anywhere: $1/$2 the entity types and
-- their categories, $3/$4 the tag ids and theirs. Each probe stops at the first row (the
-- addresses_entity and address_tags_tag indexes); entities are read by type without an index,
-- one row per operator entity.
SELECT m.category
FROM unnest($1::text[], $2::text[]) m(type, category)
WHERE EXISTS (SELECT 1 FROM intel.entities e
              WHERE e.type = m.type AND EXISTS (SELECT 1 FROM intel.addresses a WHERE a.entity_id = e.id))
UNION
SELECT m.category
FROM unnest($3::text[], $4::text[]) m(tag, category)
WHERE EXISTS (SELECT 1 FROM intel.address_tags t WHERE t.tag_id = m.tag)
