INSERT INTO balances.current AS c (chain, address, token, block_number, block_hash, block_time, balance, owner, kind)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::timestamptz[], $7::numeric[], $8::text[], $9::text[])
ON CONFLICT (chain, address, token) DO UPDATE
  SET block_number = excluded.block_number, block_hash = excluded.block_hash, block_time = excluded.block_time,
      balance = excluded.balance, owner = excluded.owner, kind = excluded.kind
