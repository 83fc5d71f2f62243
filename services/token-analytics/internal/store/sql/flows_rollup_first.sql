-- Adds a batch's first-seen counted transfers, summed and classified in Go, to the rollups:
-- $1..$9 the per-(chain, token, hour, address) legs of closed hours (chain, chain_type, token,
-- hour, address, in_usd, in_value, out_usd, out_value; each key once; the open hours' are read
-- from market.flows), $10..$19 the per-(chain, token, hour) sums (chain, token, hour, transfers,
-- volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd; each key once).
-- Rows are upserted in the key order of flows_rollup_tail, so concurrent writers lock them in
-- one order.
WITH by_address AS (
    INSERT INTO market.flow_address_hours AS a (chain, chain_type, token, hour, address, in_usd, in_value, out_usd, out_value)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[],
                         $6::float8[], $7::float8[], $8::float8[], $9::float8[])
        AS l(chain, chain_type, token, hour, address, in_usd, in_value, out_usd, out_value)
    ORDER BY chain, token, hour, address
    ON CONFLICT (chain, token, hour, address) DO UPDATE SET
        in_usd = a.in_usd + excluded.in_usd, in_value = a.in_value + excluded.in_value,
        out_usd = a.out_usd + excluded.out_usd, out_value = a.out_value + excluded.out_value
    RETURNING a.chain, a.token
), address_versions AS (
    -- the deployments whose closed rows changed: top_flow's kept sums of them are stale
    INSERT INTO market.flow_address_versions AS v (chain, token, version)
    SELECT DISTINCT chain, token, 1 FROM by_address ORDER BY 1, 2
    ON CONFLICT (chain, token) DO UPDATE SET version = v.version + 1
), hour_deltas AS (
    SELECT * FROM unnest($10::text[], $11::text[], $12::timestamptz[], $13::int8[], $14::float8[], $15::float8[],
                         $16::float8[], $17::float8[], $18::float8[], $19::float8[])
        AS v(chain, token, hour, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
)
