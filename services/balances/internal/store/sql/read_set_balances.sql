-- Current balances of a set of addresses ($1 chain types, $2 addresses) on chains $3, per token.
SELECT c.chain, c.token, sum(c.balance)::text
FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
JOIN unnest($3::text[]) AS ch(chain) ON balances.chain_type(ch.chain) = r.chain_type
JOIN balances.current c ON c.chain = ch.chain AND c.address = r.address
WHERE c.balance > 0
GROUP BY 1, 2
