-- New observations only (a redelivered one conflicts and is not kept, as is a repeat within the
-- batch); an observation of a block a reorg orphaned is stored void. The new non-void ones go to
-- fresh_obs, marked held when an operator entity holds their address.
WITH ins AS (
  INSERT INTO balances.observations AS o
    (chain, address, token, block_number, block_hash, block_time, balance, owner, kind, void)
  SELECT s.chain, s.address, s.token, s.block_number, s.block_hash, s.block_time, s.balance, s.owner, s.kind,
         EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = s.chain AND b.hash = s.block_hash)
  FROM stage_obs s
  ON CONFLICT DO NOTHING
  RETURNING o.chain, o.address, o.token, o.block_number, o.block_hash, o.block_time, o.balance, o.owner, o.kind, o.void
)
INSERT INTO fresh_obs (chain, address, token, block_number, block_hash, block_time, balance, owner, kind, held)
SELECT i.chain, i.address, i.token, i.block_number, i.block_hash, i.block_time, i.balance, i.owner, i.kind, h.held IS NOT NULL
FROM ins i
-- One primary-key probe per observation (LIMIT 1 keeps the planner from hashing every attribution).
LEFT JOIN LATERAL (
  SELECT true AS held FROM balances.attributions a
  WHERE a.chain_type = balances.chain_type(i.chain) AND a.address = i.address AND a.entity_id <> '' LIMIT 1
) h ON true
WHERE NOT i.void
