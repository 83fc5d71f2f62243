-- Gives one address of the entity (an attributed one, else a predicted one) a new version, so the
-- publisher publishes it and its event carries the entity's current details.
UPDATE intel.addresses a SET version = nextval('intel.attribution_version'), updated_at = now()
FROM (SELECT chain_type, address FROM (
          (SELECT chain_type, address, 0 AS o FROM intel.addresses WHERE entity_id = $1 LIMIT 1)
          UNION ALL
          (SELECT chain_type, address, 1 AS o FROM intel.addresses WHERE predicted_entity_id = $1 LIMIT 1)) c
      ORDER BY o LIMIT 1) c
WHERE a.chain_type = c.chain_type AND a.address = c.address
