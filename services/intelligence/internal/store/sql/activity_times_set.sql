-- Sets the first and last times of addresses ($1 chain types, $2 addresses, $3 first, $4 last
-- times, in key order) a reorg recomputed.
UPDATE intel.address_activity a SET first_ms = d.first_ms, last_ms = d.last_ms
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) d(ct, addr, first_ms, last_ms)
WHERE a.chain_type = d.ct AND a.address = d.addr
