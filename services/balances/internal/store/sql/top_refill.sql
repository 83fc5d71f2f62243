-- Refills one token's top_holders from current (a scan of current: it has no index on balance,
-- and a refill follows at least 1,000 holders leaving the top): the floor falls to the balance
-- of the (2 × $3)-th largest holder, or goes (every holder is in) when there are fewer.
WITH ranked AS (
  SELECT c.address, c.balance FROM balances.current c
  WHERE c.chain = $1 AND c.token = $2 AND c.balance > 0
  ORDER BY c.balance DESC, c.address
  LIMIT 2 * $3
), f AS (
  SELECT CASE WHEN count(*) < 2 * $3 THEN 0 ELSE min(balance) END AS floor FROM ranked
), ins AS (
  INSERT INTO balances.top_holders (chain, token, address, balance)
  SELECT $1, $2, c.address, c.balance FROM balances.current c, f
  WHERE c.chain = $1 AND c.token = $2 AND c.balance > 0 AND c.balance >= f.floor
  ON CONFLICT (chain, token, address) DO UPDATE SET balance = excluded.balance
), gone AS (
  DELETE FROM balances.top_floor WHERE chain = $1 AND token = $2 AND (SELECT floor FROM f) = 0
)
UPDATE balances.top_floor SET floor = f.floor FROM f WHERE chain = $1 AND token = $2 AND f.floor > 0
