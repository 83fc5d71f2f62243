-- Marks the live groups left without addresses not live; returns them.
WITH d AS (UPDATE transfers.groups SET live = false WHERE live AND size <= 0 RETURNING grp)
    SELECT coalesce(array_agg(grp), '{}') FROM d
