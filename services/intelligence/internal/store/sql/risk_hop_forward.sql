-- One forward hop of a risk search: the pairs paid out of the frontier. $1 the chain type, $2
-- the frontier's addresses, $3 the most pairs kept: the $3 largest by USD volume of each
-- frontier address (the primary key finds an address's outgoing pairs; all of them are read
-- to sort them), then the $3 largest of those. Ties go by address, so answers are stable.
SELECT p.from_addr AS node, p.to_addr AS next, p.volume_usd
FROM (
    -- A hub (more than $4 transfers: an exchange hot wallet, a router, a bridge) other than the
    -- scored address $5 is reached but not gone past: its pairs are not read.
    SELECT f.addr
    FROM unnest($2::text[]) f(addr)
    LEFT JOIN intel.address_activity aa ON aa.chain_type = $1 AND aa.address = f.addr
    WHERE f.addr = $5 OR coalesce(aa.transfer_count, 0) <= $4
) f
CROSS JOIN LATERAL (
    SELECT from_addr, to_addr, volume_usd
    FROM intel.pair_activity
    WHERE chain_type = $1 AND from_addr = f.addr
    ORDER BY volume_usd DESC, to_addr
    LIMIT $3
) p
ORDER BY p.volume_usd DESC, p.from_addr, p.to_addr
LIMIT $3
