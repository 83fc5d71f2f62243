-- Current balances of an operator entity's addresses on chains $2, per token.
SELECT c.chain, c.token, sum(c.balance)::text
FROM balances.attributions a
JOIN unnest($2::text[]) AS ch(chain) ON balances.chain_type(ch.chain) = a.chain_type
JOIN balances.current c ON c.chain = ch.chain AND c.address = a.address
WHERE a.entity_id = $1 AND c.balance > 0
GROUP BY 1, 2
