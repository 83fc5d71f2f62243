SELECT address, balance::text FROM balances.current
WHERE chain = $1 AND token = $2 AND balance > 0
ORDER BY balance DESC, address
LIMIT $3 OFFSET $4
