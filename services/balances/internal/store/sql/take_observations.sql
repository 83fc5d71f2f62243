-- Takes the observations of the ids (mark, least(mark + $1, head)] and moves the applier's mark
-- to the range's end (the writers' lock is held, so no other applier takes the same rows). head,
-- the newest appended id (append_head.sql), is read in the same snapshot as the rows, so every id
-- of the range is committed (and taken) or rolled back for good: the mark passes no id still to
-- commit. Ids are dense but for rolled-back appends, so a range holds about $1 rows; a gap in it
-- makes a smaller round, and a gap of more than $1 ids an empty round that moves the mark all
-- the same. The range is read through the id's BRIN (summarize_ids.sql), pages of the range and
-- of what was appended since the last summary only. The non-void ones (block hash not orphaned)
-- go to fresh_obs, marked held when an operator entity holds their address. Returns how many
-- were taken, how many went to fresh_obs, and whether ids past the new mark wait.
WITH taken AS (
  SELECT o.id, o.chain, o.address, o.token, o.block_number, o.block_hash, o.block_time, o.balance, o.owner, o.kind
  FROM balances.observations o
  WHERE o.id > (SELECT id FROM balances.apply_mark)
    AND o.id <= least((SELECT id FROM balances.apply_mark) + $1, (SELECT id FROM balances.append_head))
), mark AS (
  UPDATE balances.apply_mark m SET id = least(m.id + $1, h.id) FROM balances.append_head h WHERE h.id > m.id
  RETURNING m.id, h.id AS head
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
SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM ins), coalesce((SELECT head > id FROM mark), false)
