SELECT entity_id, balance::text FROM balances.entity_current
WHERE chain = $1 AND token = $2 AND balance > 0
ORDER BY balance DESC, entity_id
LIMIT $3 OFFSET $4
