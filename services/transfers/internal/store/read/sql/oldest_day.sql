-- The oldest day any rollup holds (every rollup is applied with the chains' days).
SELECT min(bucket) FROM transfers.chain_daily
