-- A page of a token's largest holders on a chain (top_holders holds at least the 1,000 largest).
SELECT t.address, t.balance::text FROM balances.top_holders t
WHERE t.chain = $1 AND t.token = $2
ORDER BY t.balance DESC, t.address
LIMIT $3 OFFSET $4
