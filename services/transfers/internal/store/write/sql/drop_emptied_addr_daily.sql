-- Deletes the addr_daily rows of sub_pairs' addresses and days that a subtraction emptied.
DELETE FROM transfers.addr_daily r USING (SELECT DISTINCT a, date_trunc('day', bucket, 'UTC') b, chain, token
       FROM sub_pairs, LATERAL (VALUES (from_addr), (to_addr)) v(a)) k
     WHERE r.address = k.a AND r.bucket = k.b AND r.chain = k.chain AND r.token = k.token AND r.in_n = 0 AND r.out_n = 0
