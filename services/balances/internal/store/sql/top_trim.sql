-- Keeps each token of $1 chains, $2 tokens between $3 and 3 × $3 rows in top_holders: over 3 ×
-- $3, the floor rises to the balance of the (2 × $3)-th row and the rows below it leave (rows
-- tied with it stay, so every holder at or above the floor is in).
WITH t AS (
  SELECT k.chain, k.token, r.balance AS new_floor
  FROM unnest($1::text[], $2::text[]) AS k(chain, token)
  CROSS JOIN LATERAL (
    SELECT h.balance FROM balances.top_holders h WHERE h.chain = k.chain AND h.token = k.token
    ORDER BY h.balance DESC, h.address OFFSET 2 * $3 - 1 LIMIT 1
  ) r
  WHERE (SELECT count(*) FROM (SELECT 1 FROM balances.top_holders h WHERE h.chain = k.chain AND h.token = k.token LIMIT 3 * $3 + 1) x) > 3 * $3
), gone AS (
  DELETE FROM balances.top_holders h USING t
  WHERE h.chain = t.chain AND h.token = t.token AND h.balance < t.new_floor
)
INSERT INTO balances.top_floor AS f (chain, token, floor)
SELECT chain, token, new_floor FROM t
ON CONFLICT (chain, token) DO UPDATE SET floor = excluded.floor
