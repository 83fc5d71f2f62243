-- The current balance of the batch's keys no entity holds, in one statement: each key's newest
-- new observation replaces the current row only when read at a newer block, and the supply
-- moves by what the replaced rows changed. The current row is read by a LATERAL … LIMIT 1 (one
-- primary-key probe per key): a plain join lets the planner hash the whole table.
WITH n AS (
  SELECT DISTINCT ON (address, chain, token) chain, address, token, block_number, block_hash, block_time, balance, owner, kind
  FROM fresh_obs WHERE NOT held
  ORDER BY address, chain, token, block_number DESC, block_hash
), w AS (
  SELECT n.*, coalesce(c.balance, 0) AS old_balance
  FROM n LEFT JOIN LATERAL (
    SELECT c.balance, c.block_number FROM balances.current c
    WHERE c.address = n.address AND c.chain = n.chain AND c.token = n.token LIMIT 1
  ) c ON true
  WHERE c.block_number IS NULL OR n.block_number > c.block_number
), up AS (
  INSERT INTO balances.current AS c (chain, address, token, block_number, block_hash, block_time, balance, owner, kind)
  SELECT chain, address, token, block_number, block_hash, block_time, balance, owner, kind FROM w
  ON CONFLICT (address, chain, token) DO UPDATE
    SET block_number = excluded.block_number, block_hash = excluded.block_hash, block_time = excluded.block_time,
        balance = excluded.balance, owner = excluded.owner, kind = excluded.kind
)
INSERT INTO balances.token_supply AS t (chain, token, supply)
SELECT chain, token, sum(balance - old_balance) FROM w GROUP BY chain, token HAVING sum(balance - old_balance) <> 0
ON CONFLICT (chain, token) DO UPDATE SET supply = t.supply + excluded.supply
