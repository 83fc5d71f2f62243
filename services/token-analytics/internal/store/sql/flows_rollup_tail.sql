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
)
INSERT INTO market.flow_hours AS h (chain, token, hour, transfers, volume_usd, volume_value, cex_in_usd, cex_out_usd, dex_in_usd, dex_out_usd)
SELECT chain, token, hour, sum(sign)::bigint, sum(sign * usd), sum(sign * value),
       coalesce(sum(sign * usd) FILTER (WHERE to_class = 'cex'), 0),
       coalesce(sum(sign * usd) FILTER (WHERE from_class = 'cex'), 0),
       coalesce(sum(sign * usd) FILTER (WHERE to_class = 'dex'), 0),
       coalesce(sum(sign * usd) FILTER (WHERE from_class = 'dex'), 0)
FROM classed
GROUP BY chain, token, hour
ORDER BY chain, token, hour
ON CONFLICT (chain, token, hour) DO UPDATE SET
    transfers = h.transfers + excluded.transfers,
    volume_usd = h.volume_usd + excluded.volume_usd, volume_value = h.volume_value + excluded.volume_value,
    cex_in_usd = h.cex_in_usd + excluded.cex_in_usd, cex_out_usd = h.cex_out_usd + excluded.cex_out_usd,
    dex_in_usd = h.dex_in_usd + excluded.dex_in_usd, dex_out_usd = h.dex_out_usd + excluded.dex_out_usd
