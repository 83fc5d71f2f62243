-- The tokens of $1 chains, $2 tokens whose top_holders fell under $3 rows above a floor: their
-- holders below the floor have to be read from current again (top_refill).
SELECT f.chain, f.token
FROM unnest($1::text[], $2::text[]) AS k(chain, token)
JOIN balances.top_floor f ON f.chain = k.chain AND f.token = k.token
WHERE (SELECT count(*) FROM (SELECT 1 FROM balances.top_holders h WHERE h.chain = f.chain AND h.token = f.token LIMIT $3) x) < $3
