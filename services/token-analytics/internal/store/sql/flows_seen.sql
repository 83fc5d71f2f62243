-- The natural ids of a batch ($1 chains, $2 ids, parallel arrays) with a stored copy, found by
-- the leading (chain, id) of market.flows' primary key.
SELECT DISTINCT k.chain, k.id
FROM unnest($1::text[], $2::text[]) AS k(chain, id)
JOIN market.flows f ON f.chain = k.chain AND f.id = k.id
