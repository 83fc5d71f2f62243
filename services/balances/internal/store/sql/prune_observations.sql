-- Deletes, among the observations on pages [$1, $2) (a TID range scan: the batch is bounded by
-- pages, whatever the table's size), those no rule can read any more, raises each chain's
-- pruned_block to the newest block number it deleted (a reorg compares against it:
-- ApplyReorg), and returns how many it deleted. A
-- row goes only when it is applied (id up to apply_mark: the applier reads only id > mark and the
-- mark never moves back), its block time is before its chain's horizon (prune_horizon; a chain
-- with no horizon yet keeps everything), and
--   - its block hash is orphaned (void), or
--   - its successor, the key's next applied surviving observation (hash not orphaned) by block,
--     is itself before the horizon: the key keeps its newest surviving observation before the
--     horizon (its successor, if any, is after it), the base a reorg of a later block falls back
--     to, and every observation after the horizon; or
--   - an applied copy of it with a lower id exists (same key, block number and hash: a
--     redelivery; the lowest id stays).
-- orphaned_blocks is hashed once; the other probes are range reads of observations_key, the
-- cheapest first.
WITH pruned AS (
DELETE FROM balances.observations o
USING balances.prune_horizon h
WHERE o.ctid >= $1::tid AND o.ctid < $2::tid
  AND h.chain = o.chain AND o.block_time < h.horizon
  AND o.id <= (SELECT id FROM balances.apply_mark)
  AND (
    EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = o.chain AND b.hash = o.block_hash)
    -- Only the successor's time is tested, not searched for: a search for the first newer
    -- row before the horizon reads, from a key's base (where nothing qualifies), every row of
    -- the key after the horizon, a heap fetch each; the successor is one index step. With block
    -- times that grow with the block number the two are the same; where a block's time goes
    -- back (bitcoin's may, by up to about 2 h), a row whose successor is stamped after the
    -- horizon stays even if a later row is before it: more is kept, never less, and a reorg of
    -- that successor (within the retention by its time) falls back to the row it needs.
    OR (
      SELECT n.block_time < h.horizon FROM balances.observations n
      WHERE n.chain = o.chain AND n.address = o.address AND n.token = o.token
        AND n.block_number > o.block_number
        AND n.id <= (SELECT id FROM balances.apply_mark)
        AND NOT EXISTS (SELECT 1 FROM balances.orphaned_blocks b WHERE b.chain = n.chain AND b.hash = n.block_hash)
      ORDER BY n.block_number LIMIT 1) IS TRUE
    OR EXISTS (
      SELECT 1 FROM balances.observations d
      WHERE d.chain = o.chain AND d.address = o.address AND d.token = o.token
        AND d.block_number = o.block_number AND d.block_hash = o.block_hash AND d.id < o.id)
  )
  RETURNING o.chain, o.block_number
), newest AS (
  SELECT chain, count(*) AS n, max(block_number) AS block FROM pruned GROUP BY chain
), raised AS (
  UPDATE balances.prune_horizon p SET pruned_block = newest.block
  FROM newest WHERE p.chain = newest.chain AND p.pruned_block < newest.block
)
SELECT coalesce(sum(n), 0)::bigint FROM newest
