-- The first and last day of the daily rollups of groups $1, each read from its group's index.
SELECT min(lo), max(hi) FROM unnest($1::text[]) g(grp),
  LATERAL (SELECT min(bucket) lo, max(bucket) hi FROM transfers.grp_daily d WHERE d.grp = g.grp) x
