CREATE TEMP TABLE IF NOT EXISTS stage_attr (
  chain_type text, address text, entity_id text, label text, predicted_id text, deposit_service_id text,
  is_contract boolean, version bigint, tombstone boolean
) ON COMMIT DELETE ROWS
