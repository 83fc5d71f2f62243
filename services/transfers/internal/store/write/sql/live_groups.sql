-- The live groups.
SELECT coalesce(array_agg(grp), '{}') FROM transfers.groups WHERE live
