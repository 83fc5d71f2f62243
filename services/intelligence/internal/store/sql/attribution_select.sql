-- An address's attribution as intel.attributions.v1 publishes it, with its entities' details as
-- intel.entities stores them (populated tags included: the publisher never reads the entity's
-- other addresses). The caller appends WHERE, ORDER BY and LIMIT.
SELECT a.chain_type, a.address, COALESCE(a.entity_id, ''), a.label, a.confidence, a.source,
       COALESCE(a.predicted_entity_id, ''), COALESCE(a.deposit_service_id, ''), a.is_contract, a.cluster_ids, a.version,
       (extract(epoch FROM a.updated_at) * 1000)::bigint,
       e.id, e.name, e.type, e.note, e.service, e.website, e.twitter, e.linkedin, e.description, e.populated_tags, e.version,
       p.id, p.name, p.type, p.note, p.service, p.website, p.twitter, p.linkedin, p.description, p.populated_tags, p.version
FROM intel.addresses a
LEFT JOIN intel.entities e ON e.id = a.entity_id
LEFT JOIN intel.entities p ON p.id = a.predicted_entity_id
