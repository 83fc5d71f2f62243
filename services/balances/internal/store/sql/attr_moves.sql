-- Addresses whose entity the staged attributions change: (chain type, address, old, new).
SELECT s.chain_type, s.address, coalesce(a.entity_id, ''), CASE WHEN s.tombstone THEN '' ELSE s.entity_id END
FROM stage_attr s
LEFT JOIN balances.attributions a ON a.chain_type = s.chain_type AND a.address = s.address
WHERE (s.tombstone OR a.version IS NULL OR s.version > a.version)
  AND coalesce(a.entity_id, '') <> CASE WHEN s.tombstone THEN '' ELSE s.entity_id END
