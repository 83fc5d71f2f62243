-- Adds transfers no journal holds ($1 chain types, $2 addresses, $3 counts, $4 first and $5 last
-- times, in key order) to intel.settled_activity (migration 18).
INSERT INTO intel.settled_activity AS s (chain_type, address, transfer_count, first_ms, last_ms)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
ON CONFLICT (chain_type, address) DO UPDATE SET transfer_count = s.transfer_count + excluded.transfer_count,
    first_ms = LEAST(s.first_ms, excluded.first_ms), last_ms = GREATEST(s.last_ms, excluded.last_ms)
