-- Decides which copy of each natural id in keys counts: none when every copy's block is
-- orphaned, else the one counted already when its block is not orphaned, else the first by block
-- hash of those whose block is not orphaned. The copies whose counted flag changes are added to
-- (or subtracted from) the rollups by flows_rollup_tail.
, copies AS (
    SELECT f.chain, f.id, f.block, f.counted,
           NOT EXISTS (SELECT 1 FROM market.orphaned_blocks o WHERE o.chain = f.chain AND o.block_hash = f.block) AS live
    FROM keys k JOIN market.flows f ON f.chain = k.chain AND f.id = k.id
), ranked AS (
    SELECT chain, id, block,
           live AND row_number() OVER (PARTITION BY chain, id ORDER BY live DESC, counted DESC, block) = 1 AS want
    FROM copies
), changed AS (
    UPDATE market.flows f SET counted = r.want
    FROM ranked r
    WHERE f.chain = r.chain AND f.id = r.id AND f.block = r.block AND f.counted <> r.want
    RETURNING f.chain, f.chain_type, f.hour, f.token, f.from_addr, f.to_addr, f.value, f.usd, f.counted
), signed AS (
    SELECT chain, chain_type, hour, token, from_addr, to_addr, value, usd,
           CASE WHEN counted THEN 1::float8 ELSE -1::float8 END AS sign FROM changed
)
