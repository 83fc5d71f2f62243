INSERT INTO balances.attributions AS a (chain_type, address, entity_id, label, predicted_id, deposit_service_id, is_contract, version)
SELECT chain_type, address, entity_id, label, predicted_id, deposit_service_id, is_contract, version
FROM stage_attr WHERE NOT tombstone
ON CONFLICT (chain_type, address) DO UPDATE
  SET entity_id = excluded.entity_id, label = excluded.label, predicted_id = excluded.predicted_id,
      deposit_service_id = excluded.deposit_service_id, is_contract = excluded.is_contract, version = excluded.version
  WHERE excluded.version > a.version
