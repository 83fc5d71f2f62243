-- The pair rows with an address of the groups $1 on either side, into sub_pairs.
INSERT INTO sub_pairs
    SELECT p.* FROM transfers.pair_hourly p WHERE p.from_addr IN (SELECT address FROM transfers.attributions
    WHERE transfers.attribution_groups(entity_id, entity_type, deposit_service_id) && $1::text[])
    UNION SELECT p.* FROM transfers.pair_hourly p WHERE p.to_addr IN (SELECT address FROM transfers.attributions
    WHERE transfers.attribution_groups(entity_id, entity_type, deposit_service_id) && $1::text[])
