-- Current balances per address of a set ($1 chain types, $2 addresses) on chains $3.
SELECT r.chain_type, r.address, c.chain, c.token, c.balance::text
FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
JOIN balances.current c ON c.address = r.address
WHERE c.chain = ANY($3::text[]) AND balances.chain_type(c.chain) = r.chain_type AND c.balance > 0
