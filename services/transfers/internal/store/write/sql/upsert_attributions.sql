-- Upserts the staged attributions, the newest version of each address, keeping a stored one
-- that is as new; logs each changed address.
WITH changed AS (INSERT INTO transfers.attributions AS a
    SELECT DISTINCT ON (chain_type, address) * FROM stage_attributions ORDER BY chain_type, address, version DESC
    ON CONFLICT (chain_type, address) DO UPDATE SET
      entity_id = excluded.entity_id, entity_type = excluded.entity_type, entity = excluded.entity,
      label = excluded.label, predicted_id = excluded.predicted_id, predicted = excluded.predicted,
      deposit_service_id = excluded.deposit_service_id, is_contract = excluded.is_contract,
      version = excluded.version, updated_at = excluded.updated_at
    WHERE a.version < excluded.version
    RETURNING a.chain_type, a.address)
    INSERT INTO transfers.attribution_changes (chain_type, address) SELECT chain_type, address FROM changed
