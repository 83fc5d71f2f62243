-- Deletes the chain_hourly rows of sub_pairs' hours that a subtraction emptied.
DELETE FROM transfers.chain_hourly r USING (SELECT DISTINCT bucket b, chain, token FROM sub_pairs) k
     WHERE r.bucket = k.b AND r.chain = k.chain AND r.token = k.token AND r.n = 0
