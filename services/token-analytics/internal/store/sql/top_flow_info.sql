-- What top_flow shows of the addresses ($1 chains, $2 addresses, pairwise): the attribution of
-- the local read model, by the chain's type read once per chain from any of its rows (as in
-- top_flow.sql). One row per pair, in $1's order (info NULL when the address has none).
WITH pairs AS (
    SELECT p.chain, p.address, p.ord FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(chain, address, ord)
), types AS (
    SELECT k.chain, coalesce(
        (SELECT a.chain_type FROM market.flow_address_hours a WHERE a.chain = k.chain LIMIT 1),
        (SELECT f.chain_type FROM market.flows f WHERE f.chain = k.chain LIMIT 1)) AS chain_type
    FROM (SELECT DISTINCT chain FROM pairs) k
)
SELECT c.info
FROM pairs p
JOIN types t ON t.chain = p.chain
LEFT JOIN market.address_classes c ON c.chain_type = t.chain_type AND c.address = p.address
ORDER BY p.ord
