-- The old live-group membership of sub_pairs' addresses, of the groups $1 (the live groups),
-- into sub_memb: the batch's addresses as they were (memb_before), the others as they are.
INSERT INTO sub_memb
    SELECT address, grp FROM memb_before WHERE grp = ANY($1::text[]) AND address IN (SELECT from_addr FROM sub_pairs UNION SELECT to_addr FROM sub_pairs)
    UNION
    SELECT address, grp FROM (SELECT DISTINCT x.address, g.grp FROM (SELECT a FROM (SELECT from_addr FROM sub_pairs UNION SELECT to_addr FROM sub_pairs) s(a) WHERE a NOT IN (SELECT address FROM relabel_addrs)) x(address)
  CROSS JOIN LATERAL (SELECT unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) AS grp
                      FROM transfers.attributions a WHERE a.address = x.address) g) m
    WHERE grp = ANY($1::text[])
