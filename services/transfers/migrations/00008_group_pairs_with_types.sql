-- +goose Up
-- Group pair rollups (grp_pair_hourly, grp_pair_daily) were kept between entity groups only, so
-- a count or histogram of from=<entity>&to=type:<t> summed the entity's rows. They now hold every pair of two different live entity or type
-- groups (store.pairKept; deposit groups are left out), and no longer the pairs of a group with
-- itself (its self figures are in grp_hourly and grp_daily, which is what every read takes).
--
-- The new pairs are built here from pair_hourly with the read model's current membership: the
-- live groups' rollups always reflect it (writers use it, relabels re-aggregate to it). Writers
-- and relabels are kept out for the rebuild by the group lock (store.groupLock).
SELECT pg_advisory_xact_lock(7283400111);

DELETE FROM transfers.grp_pair_hourly WHERE from_grp = to_grp;
DELETE FROM transfers.grp_pair_daily WHERE from_grp = to_grp;

CREATE TEMP TABLE migrate_memb ON COMMIT DROP AS
SELECT DISTINCT a.address, g.grp
FROM transfers.attributions a
CROSS JOIN LATERAL unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) g(grp)
WHERE g.grp IN (SELECT grp FROM transfers.groups WHERE live) AND g.grp NOT LIKE 'd:%';
CREATE INDEX ON migrate_memb (address);
ANALYZE migrate_memb;

CREATE TEMP TABLE migrate_pairs ON COMMIT DROP AS
SELECT mf.grp AS fg, mt.grp AS tg, p.bucket, p.chain, p.token, p.token_id, p.n, p.usd
FROM transfers.pair_hourly p
JOIN migrate_memb mf ON mf.address = p.from_addr
JOIN migrate_memb mt ON mt.address = p.to_addr
WHERE mf.grp <> mt.grp AND NOT (mf.grp LIKE 'e:%' AND mt.grp LIKE 'e:%');

INSERT INTO transfers.grp_pair_hourly (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
SELECT fg, tg, bucket, chain, token, min(token_id), sum(n), sum(usd)
FROM migrate_pairs GROUP BY 1, 2, 3, 4, 5;

INSERT INTO transfers.grp_pair_daily (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
SELECT fg, tg, date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), sum(n), sum(usd)
FROM migrate_pairs GROUP BY 1, 2, 3, 4, 5;

-- +goose Down
SELECT pg_advisory_xact_lock(7283400111);
DELETE FROM transfers.grp_pair_hourly WHERE from_grp LIKE 't:%' OR to_grp LIKE 't:%';
DELETE FROM transfers.grp_pair_daily WHERE from_grp LIKE 't:%' OR to_grp LIKE 't:%';
INSERT INTO transfers.grp_pair_hourly (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
SELECT grp, grp, bucket, chain, token, token_id, self_n, self_usd FROM transfers.grp_hourly
WHERE grp LIKE 'e:%' AND self_n <> 0;
INSERT INTO transfers.grp_pair_daily (from_grp, to_grp, bucket, chain, token, token_id, n, usd)
SELECT grp, grp, bucket, chain, token, token_id, self_n, self_usd FROM transfers.grp_daily
WHERE grp LIKE 'e:%' AND self_n <> 0;
