-- Aggregates apply_rows into apply_pairs, with the live groups of both sides (apply_memb), the
-- first and last transfer times (entity_pair_rows' bounds) and, for a pair row of one transfer, its
-- uid.
INSERT INTO apply_pairs
SELECT i.from_addr, i.to_addr, date_trunc('hour', i.block_time, 'UTC'), i.chain, i.token, min(i.token_id),
       count(*), sum(coalesce(i.usd, 0)::numeric), sum(i.unit_value::numeric), min(coalesce(mf.g, '{}')), min(coalesce(mt.g, '{}')),
       min(i.block_time), max(i.block_time), CASE WHEN count(*) = 1 THEN (array_agg(i.uid))[1] END
FROM apply_rows i LEFT JOIN apply_memb mf ON mf.address = i.from_addr LEFT JOIN apply_memb mt ON mt.address = i.to_addr
GROUP BY 1, 2, 3, 4, 5
