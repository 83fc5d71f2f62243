-- The live groups of sub_pairs' addresses, into sub_memb.
INSERT INTO sub_memb SELECT DISTINCT x.address, g.grp FROM (SELECT from_addr FROM sub_pairs UNION SELECT to_addr FROM sub_pairs) x(address)
  CROSS JOIN LATERAL (SELECT unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) AS grp
                      FROM transfers.attributions a WHERE a.address = x.address) g
  WHERE g.grp IN (SELECT grp FROM transfers.groups WHERE live)
