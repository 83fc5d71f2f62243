-- Deletes, among the observations on pages [$1, $2) (a TID range scan: the batch is bounded by
-- pages, whatever the table's size), those no rule can read any more, and returns how many. A
-- row goes only when it is applied (id up to apply_mark: the applier reads only id > mark and the
-- mark never moves back), its block time is before its chain's horizon (prune_horizon; a chain
-- with no horizon yet keeps everything), and
--   - its block hash is orphaned (void), or
--   - a newer (by block) applied observation of its key survives (hash not orphaned) that is
--     itself before the horizon: the key keeps its newest surviving observation before the
--     horizon (never superseded by this rule), the base a reorg of a later block falls back to,
--     and every observation after the horizon; or
--   - an applied copy of it with a lower id exists (same key, block number and hash: a
--     redelivery; the lowest id stays).
-- orphaned_blocks is hashed once; the other probes are range reads of observations_key, the
-- cheapest first.
DELETE FROM balances.observations o
USING balances.prune_horizon h
WHERE o.ctid >= $1::tid AND o.ctid < $2::tid
  AND h.chain = o.chain AND o.block_time < h.horizon
  AND o.id <= (SELECT id FROM balances.apply_mark)
  AND (
    EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = o.chain AND b.hash = o.block_hash)
    -- The key's observations above o's block in ascending order, up to the first that
    -- qualifies: o's successor when o goes; the rows after the horizon (a busy key's many) are
    -- read through only from its base.
    OR (
      SELECT true FROM balances.observations n
      WHERE n.chain = o.chain AND n.address = o.address AND n.token = o.token
        AND n.block_number > o.block_number AND n.block_time < h.horizon
        AND n.id <= (SELECT id FROM balances.apply_mark)
        AND NOT EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = n.chain AND b.hash = n.block_hash)
      ORDER BY n.block_number LIMIT 1) IS NOT NULL
    OR EXISTS (
      SELECT 1 FROM balances.observations d
      WHERE d.chain = o.chain AND d.address = o.address AND d.token = o.token
        AND d.block_number = o.block_number AND d.block_hash = o.block_hash AND d.id < o.id)
  )
