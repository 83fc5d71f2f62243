SELECT e.entity_id, e.balance::text FROM balances.entity_current e
WHERE e.chain = $1 AND e.token = $2 AND e.balance > 0
ORDER BY e.balance DESC, e.entity_id
LIMIT $3 OFFSET $4
