-- Daily snapshots of keys no entity holds: a day's row is replaced only by a newer block.
INSERT INTO balances.address_daily AS a (chain, address, token, day, block_number, balance)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::bigint[], $6::numeric[])
ON CONFLICT (address, chain, token, day) DO UPDATE
  SET block_number = excluded.block_number, balance = excluded.balance
  WHERE excluded.block_number > a.block_number
