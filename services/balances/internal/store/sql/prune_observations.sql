-- Deletes, among the observations on pages [$1, $2) (a TID range scan: the batch is bounded by
-- pages, whatever the table's size), those no rule can read any more, and returns how many. A
-- row goes only when it is applied (id up to apply_mark: the applier reads only id > mark and the
-- mark never moves back), its block time is before its chain's horizon (prune_horizon), and
--   - its block hash is orphaned (void), or
--   - an applied copy of it with a lower id exists (same key, block number and hash: a
--     redelivery; the lowest id stays), or
--   - a newer (by block) applied observation of its key survives (hash not orphaned) that is
--     itself before the horizon: the key keeps its newest surviving observation before the
--     horizon (never superseded by this rule), the base a reorg of a later block falls back to,
--     and every observation after the horizon.
-- The three probes are primary-key lookups of orphaned_blocks and range reads of
-- observations_key. Rows of a chain with no horizon yet are kept.
DELETE FROM balances.observations o
USING balances.prune_horizon h
WHERE o.ctid >= $1::tid AND o.ctid < $2::tid
  AND h.chain = o.chain AND o.block_time < h.horizon
  AND o.id <= (SELECT id FROM balances.apply_mark)
  AND (
    EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = o.chain AND b.hash = o.block_hash)
    OR EXISTS (
      SELECT 1 FROM balances.observations d
      WHERE d.chain = o.chain AND d.address = o.address AND d.token = o.token
        AND d.block_number = o.block_number AND d.block_hash = o.block_hash AND d.id < o.id)
    OR EXISTS (
      SELECT 1 FROM balances.observations n
      WHERE n.chain = o.chain AND n.address = o.address AND n.token = o.token
        AND n.block_number > o.block_number AND n.block_time < h.horizon
        AND n.id <= (SELECT id FROM balances.apply_mark)
        AND NOT EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = n.chain AND b.hash = n.block_hash))
  )
