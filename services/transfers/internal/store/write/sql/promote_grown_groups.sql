-- Marks live the groups of more than $1 (GroupMin) addresses that are not; returns them.
WITH f AS (UPDATE transfers.groups SET live = true WHERE NOT live AND size > $1 RETURNING grp)
    SELECT coalesce(array_agg(grp), '{}') FROM f
