-- The chains of chain type $1 in the journal, with their oldest and newest block's time: a walk
-- over the journal's chains, then each chain's newest and oldest block, all by index
-- (block_facts_age), so the journal's blocks are not read.
WITH RECURSIVE c(chain) AS (
    SELECT min(chain) FROM intel.block_facts
    UNION ALL
    SELECT (SELECT min(b.chain) FROM intel.block_facts b WHERE b.chain > c.chain) FROM c WHERE c.chain IS NOT NULL
)
SELECT c.chain, lo.newest_ms, hi.newest_ms
FROM c
CROSS JOIN LATERAL (SELECT b.newest_ms, b.chain_type FROM intel.block_facts b WHERE b.chain = c.chain ORDER BY b.newest_ms DESC LIMIT 1) hi
CROSS JOIN LATERAL (SELECT b.newest_ms FROM intel.block_facts b WHERE b.chain = c.chain ORDER BY b.newest_ms LIMIT 1) lo
WHERE c.chain IS NOT NULL AND hi.chain_type = $1
