-- The addresses of $1 that are not in attribution group $2.
SELECT a FROM unnest($1::text[]) a WHERE NOT EXISTS (SELECT 1 FROM transfers.attributions t
  WHERE t.address = a AND $2 = ANY(transfers.attribution_groups(t.entity_id, t.entity_type, t.deposit_service_id)))
