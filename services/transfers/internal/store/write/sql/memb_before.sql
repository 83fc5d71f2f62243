-- The groups of relabel_addrs before the batch, into memb_before.
INSERT INTO memb_before SELECT DISTINCT x.address, g.grp FROM (SELECT address FROM relabel_addrs) x(address)
  CROSS JOIN LATERAL (SELECT unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) AS grp
                      FROM transfers.attributions a WHERE a.address = x.address) g
