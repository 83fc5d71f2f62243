-- groupLock (7283400111) exclusive; empties every group rollup and recounts every group's
-- addresses from the read model, none live; bumps the group epoch.
SET LOCAL work_mem = '64MB'; SET LOCAL jit = off; SELECT pg_advisory_xact_lock(7283400111);
TRUNCATE transfers.grp_hourly, transfers.grp_daily, transfers.grp_pair_hourly, transfers.grp_pair_daily,
      transfers.entity_pair_rows, transfers.grp_cp, transfers.groups;
INSERT INTO transfers.groups (grp, size)
    SELECT g, count(DISTINCT address) FROM transfers.attributions,
      unnest(transfers.attribution_groups(entity_id, entity_type, deposit_service_id)) g
    GROUP BY g;
UPDATE transfers.group_epoch SET epoch = epoch + 1
