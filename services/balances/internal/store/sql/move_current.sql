-- Moves the current balances of relabelled addresses between entities (as move_change). A zero
-- balance still writes its row: read_entity_back.sql counts an entity's past back from its rows,
-- so every token the entity has changes of (move_change moves the snapshots) needs one.
WITH m AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS m(chain_type, address, old_id, new_id)
), d AS (
  SELECT m.old_id, m.new_id, c.chain, c.token, c.balance
  FROM m
  JOIN balances.current c ON c.address = m.address AND balances.chain_type(c.chain) = m.chain_type
), moved AS (
  SELECT entity_id, chain, token, sum(balance) AS balance FROM (
    SELECT old_id AS entity_id, chain, token, -balance AS balance FROM d WHERE old_id <> ''
    UNION ALL
    SELECT new_id, chain, token, balance FROM d WHERE new_id <> ''
  ) x GROUP BY 1, 2, 3
)
INSERT INTO balances.entity_current AS e (entity_id, chain, token, balance)
SELECT entity_id, chain, token, balance FROM moved
ON CONFLICT (entity_id, chain, token) DO UPDATE SET balance = e.balance + excluded.balance
