, legs AS (
    SELECT chain, chain_type, token, hour, to_addr AS address, sign * usd AS in_usd, sign * value AS in_value,
           0::float8 AS out_usd, 0::float8 AS out_value FROM signed
    UNION ALL
    SELECT chain, chain_type, token, hour, from_addr, 0, 0, sign * usd, sign * value FROM signed
), by_address AS (
    INSERT INTO market.flow_address_hours AS a (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
    SELECT chain, token, hour, address, min(chain_type), sum(in_usd), sum(in_value), sum(out_usd), sum(out_value)
    FROM legs l
    -- per address only in closed hours: the open ones are read from market.flows
    WHERE l.hour < (SELECT coalesce(max(m.rolled_until), '-infinity') FROM market.flow_marks m WHERE m.chain = l.chain)
    GROUP BY chain, token, hour, address
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
), classed AS (
    SELECT s.*, market.address_class(tc.attributed_type, tc.deposit_type, tc.is_pool) AS to_class, market.address_class(fc.attributed_type, fc.deposit_type, fc.is_pool) AS from_class
    FROM signed s
    LEFT JOIN market.address_classes tc ON tc.chain_type = s.chain_type AND tc.address = s.to_addr
    LEFT JOIN market.address_classes fc ON fc.chain_type = s.chain_type AND fc.address = s.from_addr
), hour_deltas AS (
    SELECT chain, token, hour, sum(sign)::bigint AS transfers, sum(sign * usd) AS volume_usd, sum(sign * value) AS volume_value,
           coalesce(sum(sign * usd) FILTER (WHERE to_class IN ('cex', 'cex_deposit')), 0)
             - coalesce(sum(sign * usd) FILTER (WHERE from_class = 'cex_deposit'), 0) AS cex_in_usd,
           coalesce(sum(sign * usd) FILTER (WHERE from_class = 'cex'), 0) AS cex_out_usd,
           coalesce(sum(sign * usd) FILTER (WHERE to_class = 'dex'), 0) AS dex_in_usd,
           coalesce(sum(sign * usd) FILTER (WHERE from_class = 'dex'), 0) AS dex_out_usd
    FROM classed
    GROUP BY chain, token, hour
)
