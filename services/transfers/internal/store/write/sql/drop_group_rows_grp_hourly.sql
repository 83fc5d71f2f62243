-- Deletes every grp_hourly row of the groups $1.
DELETE FROM transfers.grp_hourly WHERE grp = ANY($1::text[])
