-- The first and last time of the counted journal transfers of addresses $4 in the blocks of
-- chains $1 whose time is in [$2, $3) (block_facts_age), per address (migration 18's
-- intel.journal_transfers).
SELECT j.address, min(j.ms), max(j.ms)
FROM intel.block_facts b
CROSS JOIN LATERAL intel.journal_transfers(b) j
JOIN unnest($4::text[]) q(address) ON q.address = j.address
WHERE b.chain = ANY($1) AND b.newest_ms >= $2 AND b.newest_ms < $3 AND NOT b.orphaned
GROUP BY 1
