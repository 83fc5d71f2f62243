INSERT INTO balances.address_daily AS a (chain, address, token, day, block_number, balance)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::bigint[], $6::numeric[])
ON CONFLICT (chain, address, token, day) DO UPDATE
  SET block_number = excluded.block_number, balance = excluded.balance
