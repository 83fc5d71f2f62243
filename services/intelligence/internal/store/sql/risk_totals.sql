-- The USD volume an address received ($2, on chain type $1) over all its incoming pairs, and
-- sent over all its outgoing pairs: what a risk source's contribution_pct is a share of.
SELECT
    (SELECT COALESCE(sum(volume_usd), 0) FROM intel.pair_activity WHERE chain_type = $1 AND to_addr = $2),
    (SELECT COALESCE(sum(volume_usd), 0) FROM intel.pair_activity WHERE chain_type = $1 AND from_addr = $2)
