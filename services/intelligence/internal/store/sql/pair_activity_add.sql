-- Adds a batch's sums per (chain type, from, to) ($1..$5: chain types, senders, recipients, USD,
-- counts; from <> to, in key order) to intel.pair_activity and to the internal figure of the
-- entity both addresses are attributed to now, in one statement (one round trip). The statement
-- runs holding the lock that entity moves take exclusively, so the attributions it reads are
-- those its pairs count for. The two inserts are independent: the internal figure reads the
-- batch's sums and intel.addresses, never intel.pair_activity, so the snapshot the parts share
-- (neither sees the other's rows) changes nothing. PostgreSQL runs the WITH insert to completion
-- after the main one, so a batch locks pair_activity rows (in key order) before entity_internal
-- rows (in entity order), as the writers of two statements do (reorgs, and batches of replicas of
-- the releases before this statement, which ran during a rolling upgrade).
WITH d AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::bigint[]) d(ct, f, t, usd, n)
), internal AS (
    INSERT INTO intel.entity_internal AS i (entity_id, volume_usd, transfer_count)
    SELECT af.entity_id, sum(d.usd), sum(d.n)
    FROM d
    JOIN intel.addresses af ON af.chain_type = d.ct AND af.address = d.f
    JOIN intel.addresses at ON at.chain_type = d.ct AND at.address = d.t
    WHERE af.entity_id = at.entity_id
    GROUP BY af.entity_id ORDER BY af.entity_id
    ON CONFLICT (entity_id) DO UPDATE SET volume_usd = i.volume_usd + excluded.volume_usd,
        transfer_count = i.transfer_count + excluded.transfer_count
)
INSERT INTO intel.pair_activity AS p (chain_type, from_addr, to_addr, volume_usd, transfer_count)
SELECT d.ct, d.f, d.t, d.usd, d.n FROM d
ON CONFLICT (chain_type, from_addr, to_addr) DO UPDATE SET volume_usd = p.volume_usd + excluded.volume_usd,
    transfer_count = p.transfer_count + excluded.transfer_count
