-- Drops the pairs of ($1, $2, $3) (chain types, senders, recipients) a reorg emptied.
DELETE FROM intel.pair_activity p USING unnest($1::text[], $2::text[], $3::text[]) d(ct, f, t)
WHERE p.chain_type = d.ct AND p.from_addr = d.f AND p.to_addr = d.t AND p.transfer_count <= 0
