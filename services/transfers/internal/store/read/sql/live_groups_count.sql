-- How many of the groups $1 are live.
SELECT count(*) FROM transfers.groups WHERE grp = ANY($1::text[]) AND live
