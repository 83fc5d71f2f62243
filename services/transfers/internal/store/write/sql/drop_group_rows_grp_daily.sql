-- Deletes every grp_daily row of the groups $1.
DELETE FROM transfers.grp_daily WHERE grp = ANY($1::text[])
