-- Deletes every grp_edges row of the groups $1.
DELETE FROM transfers.grp_edges WHERE grp = ANY($1::text[])
