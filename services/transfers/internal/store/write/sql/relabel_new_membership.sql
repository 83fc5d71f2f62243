-- The new live-group membership of sub_pairs' addresses, but for the groups $1 (those just turned
-- live, built whole afterwards), into sub_memb.
INSERT INTO sub_memb SELECT address, grp FROM (SELECT DISTINCT x.address, g.grp FROM (SELECT from_addr FROM sub_pairs UNION SELECT to_addr FROM sub_pairs) x(address)
  CROSS JOIN LATERAL (SELECT unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) AS grp
                      FROM transfers.attributions a WHERE a.address = x.address) g
  WHERE g.grp IN (SELECT grp FROM transfers.groups WHERE live)) m WHERE grp <> ALL($1::text[])
