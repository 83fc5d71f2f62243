-- Deletes every grp_pair_daily row of the groups $1.
DELETE FROM transfers.grp_pair_daily WHERE from_grp = ANY($1::text[]) OR to_grp = ANY($1::text[])
