-- Takes a reorg's sums per (chain type, from, to) back out of intel.pair_activity ($1..$5 as in
-- pair_activity_add.sql); pair_activity_drop.sql then drops the pairs it emptied.
UPDATE intel.pair_activity p SET volume_usd = p.volume_usd - d.usd, transfer_count = p.transfer_count - d.n
FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::bigint[]) d(ct, f, t, usd, n)
WHERE p.chain_type = d.ct AND p.from_addr = d.f AND p.to_addr = d.t
