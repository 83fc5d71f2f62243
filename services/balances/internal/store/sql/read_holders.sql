-- A token's holders ranked $4+1 to $4+$3 (balance, largest first, ties by address), from
-- top_holders: its members ranked above the token's floor are exactly its first holders
-- (migrations/00005_top_holders.sql), and they are the first members.
SELECT t.address, t.balance::text FROM balances.top_holders t
LEFT JOIN balances.top_floor f ON f.chain = t.chain AND f.token = t.token
WHERE t.chain = $1 AND t.token = $2
  AND (f.chain IS NULL OR t.balance > f.balance OR (t.balance = f.balance AND t.address < f.address))
ORDER BY t.balance DESC, t.address
LIMIT $3 OFFSET $4
