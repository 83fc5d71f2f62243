-- The live groups of each address of $1 (addresses in none are left out), from the read model.
SELECT address, array_agg(grp) FROM (SELECT DISTINCT x.address, g.grp FROM (SELECT unnest($1::text[])) x(address)
  CROSS JOIN LATERAL (SELECT unnest(transfers.attribution_groups(a.entity_id, a.entity_type, a.deposit_service_id)) AS grp
                      FROM transfers.attributions a WHERE a.address = x.address) g
  WHERE g.grp IN (SELECT grp FROM transfers.groups WHERE live)) m GROUP BY address
