-- The deposit services (entity ids) with a deposit address classified by a type other than the
-- entity's stored one: what a migration seeded, or a type that changed while a replica of a
-- previous release applied it.
SELECT DISTINCT c.deposit_service
FROM market.address_classes c
LEFT JOIN market.entity_types e ON e.entity_id = c.deposit_service
WHERE c.deposit_service IS NOT NULL AND c.deposit_type IS DISTINCT FROM e.entity_type
ORDER BY 1
