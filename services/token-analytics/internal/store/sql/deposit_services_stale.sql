-- The entities (ids) with an attributed address or a deposit address classified by a type other
-- than the entity's stored one: what a migration seeded, or a type that changed while a replica
-- of a previous release applied it (those classified an attributed address by its own record's
-- entity type and did not classify the other addresses of an entity whose type changed).
SELECT c.deposit_service
FROM market.address_classes c
LEFT JOIN market.entity_types e ON e.entity_id = c.deposit_service
WHERE c.deposit_service IS NOT NULL AND c.deposit_type IS DISTINCT FROM e.entity_type
UNION
SELECT e.entity_id
FROM market.address_classes c
JOIN market.entity_types e ON e.entity_id = c.info->'entity'->>'id'
WHERE c.attributed_type IS DISTINCT FROM e.entity_type
ORDER BY 1
