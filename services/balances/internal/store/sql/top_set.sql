-- Keeps top_holders in step with new current balances ($1 chains, $2 addresses, $3 tokens, $4
-- balances; 0 for a key that lost its current row): a key at or above its token's floor is in
-- with its balance, any other is out.
WITH k AS (
  SELECT k.chain, k.address, k.token, k.balance, coalesce(f.floor, 0) AS floor
  FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) AS k(chain, address, token, balance)
  LEFT JOIN balances.top_floor f ON f.chain = k.chain AND f.token = k.token
), gone AS (
  DELETE FROM balances.top_holders t USING k
  WHERE t.chain = k.chain AND t.token = k.token AND t.address = k.address AND (k.balance <= 0 OR k.balance < k.floor)
)
INSERT INTO balances.top_holders AS t (chain, token, address, balance)
SELECT chain, token, address, balance FROM k WHERE balance > 0 AND balance >= floor
ON CONFLICT (chain, token, address) DO UPDATE SET balance = excluded.balance
