SELECT c.address, c.balance::text FROM balances.current c
WHERE c.chain = $1 AND c.token = $2 AND c.balance > 0
ORDER BY c.balance DESC, c.address
LIMIT $3 OFFSET $4
