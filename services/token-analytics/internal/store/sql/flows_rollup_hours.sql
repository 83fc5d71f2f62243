-- The end every flow rollup statement shares: adds the statement's hour_deltas (chain, token, hour,
-- transfers, volumes, CEX/DEX in and out) to flow_hours and, summed per UTC day, to flow_days,
-- in key order so concurrent writers lock rows in one order. Appended to flows_rollup_first and
-- flows_rollup_tail, which end with their hour_deltas CTE.
, by_hour AS (
    INSERT INTO market.flow_hours AS h (chain, token, hour, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
    SELECT * FROM hour_deltas
    ORDER BY chain, token, hour
    ON CONFLICT (chain, token, hour) DO UPDATE SET
        transfers = h.transfers + excluded.transfers,
        volume_usd = h.volume_usd + excluded.volume_usd, volume_value = h.volume_value + excluded.volume_value,
        cex_in_usd = h.cex_in_usd + excluded.cex_in_usd, cex_out_usd = h.cex_out_usd + excluded.cex_out_usd,
        dex_in_usd = h.dex_in_usd + excluded.dex_in_usd, dex_out_usd = h.dex_out_usd + excluded.dex_out_usd
    RETURNING 1
)
INSERT INTO market.flow_days AS d (chain, token, day, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
SELECT chain, token, date_bin('1 day', hour, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS day,
       sum(transfers), sum(volume_usd), sum(volume_value), sum(cex_in_usd), sum(cex_out_usd), sum(dex_in_usd), sum(dex_out_usd)
FROM hour_deltas
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
ON CONFLICT (chain, token, day) DO UPDATE SET
    transfers = d.transfers + excluded.transfers,
    volume_usd = d.volume_usd + excluded.volume_usd, volume_value = d.volume_value + excluded.volume_value,
    cex_in_usd = d.cex_in_usd + excluded.cex_in_usd, cex_out_usd = d.cex_out_usd + excluded.cex_out_usd,
    dex_in_usd = d.dex_in_usd + excluded.dex_in_usd, dex_out_usd = d.dex_out_usd + excluded.dex_out_usd
