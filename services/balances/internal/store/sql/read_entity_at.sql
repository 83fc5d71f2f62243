-- An operator entity's balances at the end of day $3: the sum of its day-over-day changes up to
-- that day, one row per (chain, token), from one range of entity_change's primary key.
SELECT chain, token, sum(delta)::text FROM balances.entity_change
WHERE entity_id = $1 AND chain = ANY($2::text[]) AND day <= $3::date
GROUP BY chain, token
HAVING sum(delta) <> 0
