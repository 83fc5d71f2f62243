-- New observations only (a redelivered one conflicts and is not returned, as is a repeat within
-- the batch); an observation of a block a reorg orphaned is stored void.
WITH ins AS (
  INSERT INTO balances.observations AS o
    (chain, address, token, block_number, block_hash, block_time, balance, owner, kind, void)
  SELECT s.chain, s.address, s.token, s.block_number, s.block_hash, s.block_time, s.balance, s.owner, s.kind,
         EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = s.chain AND b.hash = s.block_hash)
  FROM stage_obs s
  ON CONFLICT DO NOTHING
  RETURNING o.chain, o.address, o.token, o.block_number, o.block_hash, o.block_time, o.balance::text, o.owner, o.kind, o.void
)
SELECT chain, address, token, block_number, block_hash, block_time, balance, owner, kind FROM ins WHERE NOT void
