-- Deletes every grp_pair_hourly row of the groups $1.
DELETE FROM transfers.grp_pair_hourly WHERE from_grp = ANY($1::text[]) OR to_grp = ANY($1::text[])
