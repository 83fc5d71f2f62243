-- The current balance and the snapshots of the round's keys no entity holds, in one statement.
-- Each key's newest new observation is inserted for a key without a current row, and replaces
-- the current row of an existing key only when read at a newer block; the supply moves by what
-- the statement changed. A key new to the table is written by the insert alone (no probe of
-- current before it); only the keys the insert skipped are probed, by a LATERAL … LIMIT 1 (one
-- primary-key probe per key: a plain join lets the planner hash the whole table), and updated by
-- tuple id. top_holders follows the changed balances (only those at or above their token's floor
-- are in).
--
-- The current row is also its day's snapshot (readers take, per day, the newest by block of
-- address_daily and current), so address_daily gets a row only for a day that is not the
-- current row's: the replaced current row's day when the new one is of a later day (that day
-- closes), a late newest observation of a day before the current row's, and the newest new
-- observation of each other day the round brings. A row replaces a day's row only when read at a
-- newer block.
WITH n AS (
  SELECT DISTINCT ON (address, chain, token) chain, address, token, block_number, block_hash, block_time, balance, owner, kind
  FROM fresh_obs WHERE NOT held
  ORDER BY address, chain, token, block_number DESC, block_hash
), ins AS (
  INSERT INTO balances.current AS c (chain, address, token, block_number, block_hash, block_time, balance, owner, kind)
  SELECT chain, address, token, block_number, block_hash, block_time, balance, owner, kind FROM n
  ON CONFLICT (address, chain, token) DO NOTHING
  RETURNING c.address, c.chain, c.token, c.balance
), probed AS (
  SELECT n.*, c.tid, c.balance AS old_balance, c.block_number AS old_block, c.block_time AS old_time
  FROM n
  CROSS JOIN LATERAL (
    SELECT c.ctid AS tid, c.balance, c.block_number, c.block_time FROM balances.current c
    WHERE c.address = n.address AND c.chain = n.chain AND c.token = n.token LIMIT 1
  ) c
  WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins.address = n.address AND ins.chain = n.chain AND ins.token = n.token)
), old AS (
  SELECT * FROM probed WHERE block_number > old_block
), up AS (
  UPDATE balances.current c
  SET block_number = old.block_number, block_hash = old.block_hash, block_time = old.block_time,
      balance = old.balance, owner = old.owner, kind = old.kind
  FROM old WHERE c.ctid = old.tid
), days AS (
  SELECT chain, address, token, (old_time AT TIME ZONE 'UTC')::date AS day, old_block AS block_number, old_balance AS balance
  FROM old WHERE (old_time AT TIME ZONE 'UTC')::date < (block_time AT TIME ZONE 'UTC')::date
  UNION ALL
  SELECT chain, address, token, (block_time AT TIME ZONE 'UTC')::date, block_number, balance
  FROM probed WHERE block_number <= old_block AND (block_time AT TIME ZONE 'UTC')::date < (old_time AT TIME ZONE 'UTC')::date
  UNION ALL
  -- The round's observations of a day other than their key's newest one's (one sort of the
  -- round's rows, by the window, rather than a join of them with n).
  SELECT chain, address, token, day, block_number, balance FROM (
    SELECT chain, address, token, block_number, balance, (block_time AT TIME ZONE 'UTC')::date AS day,
      first_value((block_time AT TIME ZONE 'UTC')::date) OVER (
        PARTITION BY address, chain, token ORDER BY block_number DESC, block_hash) AS top_day
    FROM fresh_obs WHERE NOT held
  ) r WHERE day <> top_day
), daily AS (
  INSERT INTO balances.address_daily AS a (chain, address, token, day, block_number, balance)
  SELECT DISTINCT ON (address, chain, token, day) chain, address, token, day, block_number, balance
  FROM days
  ORDER BY address, chain, token, day, block_number DESC
  ON CONFLICT (address, chain, token, day) DO UPDATE
    SET block_number = excluded.block_number, balance = excluded.balance
    WHERE excluded.block_number > a.block_number
), moved AS (
  -- The keys whose balance changed, against their token's top_holders floor (as top_set).
  SELECT m.chain, m.address, m.token, m.balance, coalesce(f.floor, 0) AS floor
  FROM (SELECT chain, address, token, balance FROM ins UNION ALL SELECT chain, address, token, balance FROM old) m
  LEFT JOIN balances.top_floor f ON f.chain = m.chain AND f.token = m.token
), top_out AS (
  DELETE FROM balances.top_holders t USING moved m
  WHERE t.chain = m.chain AND t.token = m.token AND t.address = m.address AND (m.balance <= 0 OR m.balance < m.floor)
), top_in AS (
  INSERT INTO balances.top_holders AS t (chain, token, address, balance)
  SELECT chain, token, address, balance FROM moved WHERE balance > 0 AND balance >= floor
  ON CONFLICT (chain, token, address) DO UPDATE SET balance = excluded.balance
)
INSERT INTO balances.token_supply AS t (chain, token, supply)
SELECT chain, token, sum(delta) FROM (
  SELECT chain, token, balance AS delta FROM ins
  UNION ALL
  SELECT chain, token, balance - old_balance FROM old
) d
GROUP BY chain, token HAVING sum(delta) <> 0
ON CONFLICT (chain, token) DO UPDATE SET supply = t.supply + excluded.supply
