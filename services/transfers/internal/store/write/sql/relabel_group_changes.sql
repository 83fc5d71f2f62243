-- From the groups before (memb_before) and after (memb_after) a batch of attribution changes:
-- records the addresses whose groups changed (relabel_changed), moves the groups' sizes, and
-- returns how many (address, group) pairs came or went.
WITH rem AS (SELECT address, grp FROM memb_before EXCEPT SELECT address, grp FROM memb_after),
  ad AS (SELECT address, grp FROM memb_after EXCEPT SELECT address, grp FROM memb_before),
  ch AS (INSERT INTO relabel_changed SELECT address FROM rem UNION SELECT address FROM ad),
  sz AS (INSERT INTO transfers.groups AS g (grp, size)
         SELECT grp, sum(d) FROM (SELECT grp, -1 AS d FROM rem UNION ALL SELECT grp, 1 FROM ad) x GROUP BY grp ORDER BY grp
         ON CONFLICT (grp) DO UPDATE SET size = g.size + excluded.size)
SELECT (SELECT count(*) FROM rem) + (SELECT count(*) FROM ad)
