-- Current balances of an operator entity's addresses on chains $2, per token.
SELECT c.chain, c.token, sum(c.balance)::text
FROM balances.attributions a
JOIN balances.current c ON c.address = a.address
WHERE a.entity_id = $1 AND c.chain = ANY($2::text[]) AND balances.chain_type(c.chain) = a.chain_type AND c.balance > 0
GROUP BY 1, 2
