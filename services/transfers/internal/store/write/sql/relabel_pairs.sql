-- The pair rows of the relabelled addresses (relabel_changed), into sub_pairs.
INSERT INTO sub_pairs
    SELECT p.* FROM transfers.pair_hourly p WHERE p.from_addr IN (SELECT address FROM relabel_changed)
    UNION SELECT p.* FROM transfers.pair_hourly p WHERE p.to_addr IN (SELECT address FROM relabel_changed)
