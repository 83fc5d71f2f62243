-- The observations of blocks $2 of chain $1: the keys and days they touch.
SELECT address, token, block_time FROM balances.observations
WHERE chain = $1 AND block_hash = ANY($2::text[])
