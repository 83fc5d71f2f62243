-- Marks the observations of blocks $2 void ($3 true) or surviving again ($3 false); returns the
-- keys and days they touched.
UPDATE balances.observations SET void = $3
WHERE chain = $1 AND block_hash = ANY($2::text[]) AND void <> $3
RETURNING address, token, block_time
