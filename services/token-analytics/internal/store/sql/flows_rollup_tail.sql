, legs AS (
    SELECT chain, chain_type, token, hour, to_addr AS address, sign * usd AS in_usd, sign * value AS in_value,
           0::float8 AS out_usd, 0::float8 AS out_value FROM signed
    UNION ALL
    SELECT chain, chain_type, token, hour, from_addr, 0, 0, sign * usd, sign * value FROM signed
), by_address AS (
    INSERT INTO market.flow_address_hours AS a (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
    SELECT chain, token, hour, address, min(chain_type), sum(in_usd), sum(in_value), sum(out_usd), sum(out_value)
    FROM legs GROUP BY chain, token, hour, address
    ORDER BY chain, token, hour, address
    ON CONFLICT (chain, token, hour, address) DO UPDATE SET
        in_usd = a.in_usd + excluded.in_usd, in_value = a.in_value + excluded.in_value,
        out_usd = a.out_usd + excluded.out_usd, out_value = a.out_value + excluded.out_value
    RETURNING 1
), classed AS (
    SELECT s.*, market.flow_class(tc.entity_type, tc.is_pool) AS to_class, market.flow_class(fc.entity_type, fc.is_pool) AS from_class
    FROM signed s
    LEFT JOIN market.address_classes tc ON tc.chain_type = s.chain_type AND tc.address = s.to_addr
    LEFT JOIN market.address_classes fc ON fc.chain_type = s.chain_type AND fc.address = s.from_addr
), hour_deltas AS (
    SELECT chain, token, hour, sum(sign)::bigint AS transfers, sum(sign * usd) AS volume_usd, sum(sign * value) AS volume_value,
           coalesce(sum(sign * usd) FILTER (WHERE to_class = 'cex'), 0) AS cex_in_usd,
           coalesce(sum(sign * usd) FILTER (WHERE from_class = 'cex'), 0) AS cex_out_usd,
           coalesce(sum(sign * usd) FILTER (WHERE to_class = 'dex'), 0) AS dex_in_usd,
           coalesce(sum(sign * usd) FILTER (WHERE from_class = 'dex'), 0) AS dex_out_usd
    FROM classed
    GROUP BY chain, token, hour
), by_hour AS (
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
