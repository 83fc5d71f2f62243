-- Remembers orphaned blocks; returns those not orphaned already (their observations become void).
INSERT INTO balances.orphaned_blocks (chain, hash)
SELECT $1, h FROM unnest($2::text[]) AS h
ON CONFLICT DO NOTHING
RETURNING hash
