-- Deletes the pair_hourly rows of sub_pairs' keys that a subtraction emptied.
DELETE FROM transfers.pair_hourly r USING (SELECT from_addr, to_addr, bucket, chain, token FROM sub_pairs) k
     WHERE r.from_addr = k.from_addr AND r.to_addr = k.to_addr AND r.bucket = k.bucket AND r.chain = k.chain AND r.token = k.token AND r.n = 0
