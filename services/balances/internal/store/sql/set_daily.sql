-- Daily snapshots of the batch's keys no entity holds: each (key, UTC day)'s newest new
-- observation replaces the day's row only when read at a newer block.
INSERT INTO balances.address_daily AS a (chain, address, token, day, block_number, balance)
SELECT DISTINCT ON (address, chain, token, (block_time AT TIME ZONE 'UTC')::date)
       chain, address, token, (block_time AT TIME ZONE 'UTC')::date, block_number, balance
FROM fresh_obs WHERE NOT held
ORDER BY address, chain, token, (block_time AT TIME ZONE 'UTC')::date, block_number DESC, block_hash
ON CONFLICT (address, chain, token, day) DO UPDATE
  SET block_number = excluded.block_number, balance = excluded.balance
  WHERE excluded.block_number > a.block_number
