-- One entity's populated tags, as store.EntityTags lists them: its addresses' tags that
-- propagate to entities, by rank. One statement, so one consistent snapshot of its addresses.
SELECT COALESCE(jsonb_agg(jsonb_build_object('id', x.id, 'label', x.label, 'rank', x.rank, 'disablePage', x.disable_page,
           'excludeEntities', x.exclude_entities, 'chain', x.chain, 'params', x.params) ORDER BY x.rank, x.id, x.params), '[]')::text
FROM (SELECT DISTINCT t.id, t.label, t.rank, t.disable_page, t.exclude_entities, t.chain, at.params
      FROM intel.addresses a
      JOIN intel.address_tags at ON at.chain_type = a.chain_type AND at.address = a.address
      JOIN intel.tags t ON t.id = at.tag_id
      WHERE a.entity_id = $1 AND NOT t.exclude_entities) x
