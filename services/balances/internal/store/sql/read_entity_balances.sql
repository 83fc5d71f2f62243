-- Current balances of an operator entity's addresses on chains $2, per token. The chain type of
-- a row is not compared with the attribution's: an address string is valid for one chain type
-- only (libs/address), and leaving the comparison out lets the planner count rows right and
-- aggregate by hash.
SELECT c.chain, c.token, sum(c.balance)::text
FROM balances.attributions a
JOIN balances.current c ON c.address = a.address
WHERE a.entity_id = $1 AND c.chain = ANY($2::text[]) AND c.balance > 0
GROUP BY 1, 2
