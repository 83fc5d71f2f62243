-- The newest day any rollup holds (every rollup is applied with the chains' days).
SELECT max(bucket) FROM transfers.chain_daily
