-- /token/top: per registry token deployed on the chains $1 (all when NULL), restricted to the
-- pricing ids $5 when not NULL, its flows over the reference windows [$2, $3) and the current
-- window [$3, $4), its price now and in force at $3 (its newest point of any granularity at or before it). $6, $7, $8: the pieces of [$2, $4) (from, to,
-- whole days) that Store.TopWindows cuts.
WITH toks AS (
    SELECT t.pricing_id, t.symbol, t.market_cap, t.stablecoin, t.price
    FROM market.tokens t
    WHERE ($5::text[] IS NULL OR t.pricing_id = ANY($5))
      AND EXISTS (SELECT 1 FROM market.deployments d WHERE d.pricing_id = t.pricing_id AND ($1::text[] IS NULL OR d.chain = ANY($1)))
), segs AS (
    -- [$2, $4) cut into whole days (read from flow_days) and the hours around them (flow_hours);
    -- no piece straddles $3, so each row belongs to one window.
    SELECT * FROM unnest($6::timestamptz[], $7::timestamptz[], $8::bool[]) AS s(lo, hi, daily)
    WHERE s.lo >= $2::timestamptz
), pieces AS (
    SELECT h.chain, h.token, h.hour AS t, h.transfers, h.volume_usd, h.cex_in_usd, h.cex_out_usd, h.dex_in_usd, h.dex_out_usd
    FROM segs s
    JOIN market.flow_hours h ON NOT s.daily AND h.hour >= s.lo AND h.hour < s.hi
    WHERE ($1::text[] IS NULL OR h.chain = ANY($1))
      AND ($5::text[] IS NULL OR (h.chain, h.token) IN (SELECT d.chain, d.address FROM market.deployments d WHERE d.pricing_id = ANY($5)))
    UNION ALL
    SELECT y.chain, y.token, y.day, y.transfers, y.volume_usd, y.cex_in_usd, y.cex_out_usd, y.dex_in_usd, y.dex_out_usd
    FROM segs s
    JOIN market.flow_days y ON s.daily AND y.day >= s.lo AND y.day < s.hi
    WHERE ($1::text[] IS NULL OR y.chain = ANY($1))
      AND ($5::text[] IS NULL OR (y.chain, y.token) IN (SELECT d.chain, d.address FROM market.deployments d WHERE d.pricing_id = ANY($5)))
), by_deployment AS (
    -- Summed per (chain, token) first: a hash aggregate over the window's rows, whatever the
    -- planner guesses of the join below.
    SELECT h.chain, h.token,
        sum(h.transfers) FILTER (WHERE h.t >= $3) AS n,
        sum(h.volume_usd) FILTER (WHERE h.t >= $3) AS vol,
        sum(h.cex_in_usd) FILTER (WHERE h.t >= $3) AS cex_in,
        sum(h.cex_out_usd) FILTER (WHERE h.t >= $3) AS cex_out,
        sum(h.dex_in_usd) FILTER (WHERE h.t >= $3) AS dex_in,
        sum(h.dex_out_usd) FILTER (WHERE h.t >= $3) AS dex_out,
        sum(h.transfers) FILTER (WHERE h.t < $3) AS p_n,
        sum(h.volume_usd) FILTER (WHERE h.t < $3) AS p_vol,
        sum(h.cex_in_usd) FILTER (WHERE h.t < $3) AS p_cex_in,
        sum(h.cex_out_usd) FILTER (WHERE h.t < $3) AS p_cex_out,
        sum(h.dex_in_usd) FILTER (WHERE h.t < $3) AS p_dex_in,
        sum(h.dex_out_usd) FILTER (WHERE h.t < $3) AS p_dex_out
    FROM pieces h
    GROUP BY h.chain, h.token
), sums AS (
    SELECT d.pricing_id,
        coalesce(sum(b.vol), 0) AS vol, coalesce(sum(b.cex_in), 0) AS cex_in, coalesce(sum(b.cex_out), 0) AS cex_out,
        coalesce(sum(b.dex_in), 0) AS dex_in, coalesce(sum(b.dex_out), 0) AS dex_out,
        coalesce(sum(b.p_vol), 0) AS p_vol, coalesce(sum(b.p_cex_in), 0) AS p_cex_in, coalesce(sum(b.p_cex_out), 0) AS p_cex_out,
        coalesce(sum(b.p_dex_in), 0) AS p_dex_in, coalesce(sum(b.p_dex_out), 0) AS p_dex_out,
        coalesce(sum(b.n), 0)::int8 AS n, coalesce(sum(b.p_n), 0)::int8 AS p_n
    FROM by_deployment b
    JOIN market.deployments d ON d.chain = b.chain AND d.address = b.token
    GROUP BY d.pricing_id
)
SELECT k.pricing_id, k.symbol, k.market_cap, k.stablecoin,
       coalesce(k.price, (SELECT q.price FROM (
           (SELECT p.time, p.granularity, p.price FROM market.prices p WHERE p.pricing_id = k.pricing_id AND p.granularity = 1
            AND p.time <= $4 ORDER BY p.time DESC LIMIT 1)
           UNION ALL
           (SELECT p.time, p.granularity, p.price FROM market.prices p WHERE p.pricing_id = k.pricing_id AND p.granularity = 2
            AND p.time <= $4 ORDER BY p.time DESC LIMIT 1)
       ) q ORDER BY q.time DESC, q.granularity DESC LIMIT 1)),
       (SELECT q.price FROM (
           (SELECT p.time, p.granularity, p.price FROM market.prices p WHERE p.pricing_id = k.pricing_id AND p.granularity = 1
            AND p.time <= $3 ORDER BY p.time DESC LIMIT 1)
           UNION ALL
           (SELECT p.time, p.granularity, p.price FROM market.prices p WHERE p.pricing_id = k.pricing_id AND p.granularity = 2
            AND p.time <= $3 ORDER BY p.time DESC LIMIT 1)
       ) q ORDER BY q.time DESC, q.granularity DESC LIMIT 1),
       coalesce(s.vol, 0), coalesce(s.cex_in, 0), coalesce(s.cex_out, 0), coalesce(s.dex_in, 0), coalesce(s.dex_out, 0),
       coalesce(s.p_vol, 0), coalesce(s.p_cex_in, 0), coalesce(s.p_cex_out, 0), coalesce(s.p_dex_in, 0), coalesce(s.p_dex_out, 0),
       coalesce(s.n, 0), coalesce(s.p_n, 0)
FROM toks k LEFT JOIN sums s ON s.pricing_id = k.pricing_id
