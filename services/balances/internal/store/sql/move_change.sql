-- Moves the daily snapshots of relabelled addresses ($1 chain types, $2 addresses) from their old
-- entities ($3) to their new ones ($4): each snapshot's day-over-day change leaves the old
-- entity's changes and joins the new one's. A key's snapshots are its address_daily rows and its
-- current row (its day's snapshot), per day the newest by block.
WITH m AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS m(chain_type, address, old_id, new_id)
), s AS (
  SELECT DISTINCT ON (x.chain, x.address, x.token, x.day) x.old_id, x.new_id, x.chain, x.address, x.token, x.day, x.balance FROM (
    SELECT m.old_id, m.new_id, a.chain, a.address, a.token, a.day, a.block_number, a.balance
    FROM m JOIN balances.address_daily a ON a.address = m.address AND balances.chain_type(a.chain) = m.chain_type
    UNION ALL
    SELECT m.old_id, m.new_id, c.chain, c.address, c.token, (c.block_time AT TIME ZONE 'UTC')::date, c.block_number, c.balance
    FROM m JOIN balances.current c ON c.address = m.address AND balances.chain_type(c.chain) = m.chain_type
  ) x
  ORDER BY x.chain, x.address, x.token, x.day, x.block_number DESC
), d AS (
  SELECT old_id, new_id, chain, token, day,
         balance - coalesce(lag(balance) OVER (PARTITION BY chain, address, token ORDER BY day), 0) AS delta
  FROM s
), moved AS (
  SELECT entity_id, chain, token, day, sum(delta) AS delta FROM (
    SELECT old_id AS entity_id, chain, token, day, -delta AS delta FROM d WHERE old_id <> ''
    UNION ALL
    SELECT new_id, chain, token, day, delta FROM d WHERE new_id <> ''
  ) x GROUP BY 1, 2, 3, 4
)
INSERT INTO balances.entity_change AS e (entity_id, chain, token, day, delta)
SELECT entity_id, chain, token, day, delta FROM moved WHERE delta <> 0
ON CONFLICT (entity_id, chain, token, day) DO UPDATE SET delta = e.delta + excluded.delta
