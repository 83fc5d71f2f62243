-- The attributions of chain types $1 and addresses $2 (pairwise), for a model without a cache.
-- COLLATE "C": the address column's collation, so the comparison is a memcmp, as in its index.
SELECT a.chain_type, a.address, a.entity, a.label, a.predicted, a.deposit_service_id,
    a.is_contract, a.version, a.updated_at
FROM transfers.attributions a JOIN unnest($1::text[], $2::text[]) k(ct, addr)
  ON a.chain_type = k.ct AND a.address = k.addr COLLATE "C"
