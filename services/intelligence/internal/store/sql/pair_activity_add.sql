-- Adds a batch's sums per (chain type, from, to) to intel.pair_activity ($1..$5: chain types,
-- senders, recipients, USD, counts; from <> to).
INSERT INTO intel.pair_activity AS p (chain_type, from_addr, to_addr, volume_usd, transfer_count)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::bigint[])
ON CONFLICT (chain_type, from_addr, to_addr) DO UPDATE SET volume_usd = p.volume_usd + excluded.volume_usd,
    transfer_count = p.transfer_count + excluded.transfer_count
