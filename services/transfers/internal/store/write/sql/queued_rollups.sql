-- How many rows wait for the rollups (exact).
SELECT count(*) FROM transfers.rollup_keys
