-- The chains of chain type $1 with blocks in the journal that are not orphaned, with their
-- oldest and newest block's time.
SELECT chain, min(newest_ms), max(newest_ms) FROM intel.block_facts
WHERE chain_type = $1 AND NOT orphaned
GROUP BY chain
