-- Deletes every grp_cp row of the groups $1.
DELETE FROM transfers.grp_cp WHERE grp = ANY($1::text[])
