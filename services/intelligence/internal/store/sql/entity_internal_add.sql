-- Adds sums per (chain type, from, to), a reorg's negated to take them back, to the internal
-- figure of the entity both addresses are attributed to now; the statement runs holding the lock
-- that entity moves take exclusively, so the attributions it reads are those its pairs count for.
-- (Additions go through pair_activity_add.sql, which does this in the same statement as the pairs.)
INSERT INTO intel.entity_internal AS i (entity_id, volume_usd, transfer_count)
SELECT af.entity_id, sum(d.usd), sum(d.n)
FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::bigint[]) d(ct, f, t, usd, n)
JOIN intel.addresses af ON af.chain_type = d.ct AND af.address = d.f
JOIN intel.addresses at ON at.chain_type = d.ct AND at.address = d.t
WHERE af.entity_id = at.entity_id
GROUP BY af.entity_id ORDER BY af.entity_id
ON CONFLICT (entity_id) DO UPDATE SET volume_usd = i.volume_usd + excluded.volume_usd,
    transfer_count = i.transfer_count + excluded.transfer_count
