-- Takes up to $1 observations past the applier's mark, in id order, and moves the mark to the
-- last one (the writers' lock is held, so no other applier takes the same rows; ids commit in
-- order, see append_lock.sql). The non-void ones (block hash not orphaned) go to fresh_obs,
-- marked held when an operator entity holds their address. Returns how many were taken and how
-- many went to fresh_obs.
WITH taken AS (
  SELECT o.id, o.chain, o.address, o.token, o.block_number, o.block_hash, o.block_time, o.balance, o.owner, o.kind
  FROM balances.observations o
  WHERE o.id > (SELECT id FROM balances.apply_mark)
  ORDER BY o.id LIMIT $1
), mark AS (
  UPDATE balances.apply_mark SET id = (SELECT max(id) FROM taken) WHERE EXISTS (SELECT 1 FROM taken)
), ins AS (
  INSERT INTO fresh_obs (chain, address, token, block_number, block_hash, block_time, balance, owner, kind, held)
  SELECT t.chain, t.address, t.token, t.block_number, t.block_hash, t.block_time, t.balance, t.owner, t.kind, h.held IS NOT NULL
  FROM taken t
  -- One primary-key probe per observation (LIMIT 1 keeps the planner from hashing every attribution).
  LEFT JOIN LATERAL (
    SELECT true AS held FROM balances.attributions a
    WHERE a.chain_type = balances.chain_type(t.chain) AND a.address = t.address AND a.entity_id <> '' LIMIT 1
  ) h ON true
  WHERE NOT EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = t.chain AND b.hash = t.block_hash)
  RETURNING 1
)
SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM ins)
