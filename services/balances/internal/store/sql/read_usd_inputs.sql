-- Current balances per address of a set ($1 chain types, $2 addresses) on chains $3.
SELECT r.chain_type, r.address, c.chain, c.token, c.balance::text
FROM unnest($1::text[], $2::text[]) AS r(chain_type, address)
JOIN unnest($3::text[]) AS ch(chain) ON balances.chain_type(ch.chain) = r.chain_type
JOIN balances.current c ON c.chain = ch.chain AND c.address = r.address
WHERE c.balance > 0
