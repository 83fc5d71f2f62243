-- An operator entity's balances on chains $2 at the end of day $3, counted back from its current
-- totals: entity_current less the changes of the days after $3 (one range of each primary key,
-- O(tokens × days after $3) rows, so cheap for a recent day).
SELECT c.chain, c.token, (c.balance - coalesce(sum(e.delta), 0))::text
FROM balances.entity_current c
LEFT JOIN balances.entity_change e
  ON e.entity_id = c.entity_id AND e.chain = c.chain AND e.token = c.token AND e.day > $3::date
WHERE c.entity_id = $1 AND c.chain = ANY($2::text[])
GROUP BY c.chain, c.token, c.balance
HAVING c.balance - coalesce(sum(e.delta), 0) <> 0
