DELETE FROM balances.attributions a USING stage_attr s
WHERE s.tombstone AND a.chain_type = s.chain_type AND a.address = s.address
