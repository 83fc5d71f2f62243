-- Adds a batch's first-seen counted transfers, aggregated in Go, to the rollups: $1..$9 are the
-- per-(chain, token, hour, address) legs (chain, chain_type, token, hour, address, in_usd,
-- in_value, out_usd, out_value; each key once), $10..$15 the per-(chain, token, hour) sums
-- (chain, token, hour, transfers, volume_usd, volume_value; each key once), $16 whether each leg's
-- hour is closed (before its chain's rolled_until): only those legs are added to
-- flow_address_hours, the open hours' are read from market.flows. Rows are upserted
-- in the key order of flows_rollup_tail, so concurrent writers lock them in one order. A leg's
-- in is classified by its address's class as the receiver, its out as the sender, as
-- flows_rollup_tail classifies each transfer, with one class lookup per address instead of two
-- per transfer.
WITH legs AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[],
                         $6::float8[], $7::float8[], $8::float8[], $9::float8[], $16::bool[])
        AS l(chain, chain_type, token, hour, address, in_usd, in_value, out_usd, out_value, closed)
), by_address AS (
    INSERT INTO market.flow_address_hours AS a (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
    SELECT chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value FROM legs
    WHERE closed
    ORDER BY chain, token, hour, address
    ON CONFLICT (chain, token, hour, address) DO UPDATE SET
        in_usd = a.in_usd + excluded.in_usd, in_value = a.in_value + excluded.in_value,
        out_usd = a.out_usd + excluded.out_usd, out_value = a.out_value + excluded.out_value
    RETURNING 1
), classed AS (
    SELECT l.chain, l.token, l.hour,
           coalesce(sum(l.in_usd) FILTER (WHERE c.class = 'cex'), 0) AS cex_in_usd,
           coalesce(sum(l.out_usd) FILTER (WHERE c.class = 'cex'), 0) AS cex_out_usd,
           coalesce(sum(l.in_usd) FILTER (WHERE c.class = 'dex'), 0) AS dex_in_usd,
           coalesce(sum(l.out_usd) FILTER (WHERE c.class = 'dex'), 0) AS dex_out_usd
    FROM legs l
    JOIN (SELECT chain_type, address, market.flow_class(entity_type, is_pool) AS class FROM market.address_classes) c
        ON c.chain_type = l.chain_type AND c.address = l.address AND c.class IS NOT NULL
    GROUP BY l.chain, l.token, l.hour
), hour_deltas AS (
    SELECT v.chain, v.token, v.hour, v.transfers, v.volume_usd, v.volume_value,
           coalesce(c.cex_in_usd, 0) AS cex_in_usd, coalesce(c.cex_out_usd, 0) AS cex_out_usd,
           coalesce(c.dex_in_usd, 0) AS dex_in_usd, coalesce(c.dex_out_usd, 0) AS dex_out_usd
    FROM unnest($10::text[], $11::text[], $12::timestamptz[], $13::int8[], $14::float8[], $15::float8[])
        AS v(chain, token, hour, transfers, volume_usd, volume_value)
    LEFT JOIN classed c ON c.chain = v.chain AND c.token = v.token AND c.hour = v.hour
)
