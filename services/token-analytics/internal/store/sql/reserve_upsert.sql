INSERT INTO market.reserve_balances (chain, address, token, block_number, block_hash, balance)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::numeric[])
ON CONFLICT DO NOTHING
