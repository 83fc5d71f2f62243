-- Deletes the chain_daily rows of sub_pairs' days that a subtraction emptied.
DELETE FROM transfers.chain_daily r USING (SELECT DISTINCT date_trunc('day', bucket, 'UTC') b, chain, token FROM sub_pairs) k
     WHERE r.bucket = k.b AND r.chain = k.chain AND r.token = k.token AND r.n = 0
