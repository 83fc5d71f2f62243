-- For entity groups $1 (of entities $2): how many are live, and whether an address is in two
-- of them (an address of one entity that is a deposit address of another).
SELECT (SELECT count(*) FROM transfers.groups WHERE grp = ANY($1::text[]) AND live),
       EXISTS (SELECT 1 FROM transfers.attributions WHERE entity_id = ANY($2::text[]) AND deposit_service_id = ANY($2::text[])
               AND entity_id <> '' AND deposit_service_id <> '' AND deposit_service_id <> entity_id)
