SELECT c.chain, c.token, c.balance::text
FROM balances.current c
WHERE c.chain = ANY($1::text[]) AND c.address = $2 AND c.balance > 0
