-- The counted transfers of the deployments ($1 chains, $2 contracts) from the hours $4 on (per
-- deployment, in $1's order: where its kept closed sums end, at least $3), read from market.flows
-- through flows_token_hour, each with its chain's rank n among the deployments' chains (as
-- top_flow_closed.sql ranks them): Go adds each to its receiver's in and its sender's out, which
-- costs less than grouping the legs here (a sort or hash of every leg). The rows of hours closed
-- since the kept sums were read come from flows too: flows keeps every counted copy, and
-- flow_address_hours' rows of those hours sum exactly them. One more row, its n NULL, is the
-- stamp of the closed rows in the same snapshot, as in top_flow_closed.sql: the kept sums are
-- used only when it equals theirs; it also carries the window's volume of the deployments
-- (flow_hours from $3 on and the partial hour's transfers: transfers, USD and units), which the
-- residues are read against as in top_flow.sql. When the window starts inside an hour ($5, the
-- request's exact start, before $3, the first whole hour), the counted transfers of that hour at or
-- after $5 are rows too, as top_flow.sql reads them (a copy without its block time as at its
-- hour's start): the kept sums start at $3, and this partial hour is the request's own.
WITH deps AS (
    SELECT d.chain, d.token, d.ord, dense_rank() OVER (ORDER BY d.chain COLLATE "C")::int AS n,
           k.rolled_until, coalesce(v.version, 0) AS version, greatest($3::timestamptz, d.open_from) AS open_from
    FROM unnest($1::text[], $2::text[], $4::timestamptz[]) WITH ORDINALITY AS d(chain, token, open_from, ord)
    LEFT JOIN market.flow_marks k ON k.chain = d.chain
    LEFT JOIN market.flow_address_versions v ON v.chain = d.chain AND v.token = d.token
), partial AS (
    SELECT deps.n, f.from_addr, f.to_addr, f.usd, f.value
    FROM deps
    JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token
        AND f.hour >= $3::timestamptz - interval '1 hour' AND f.hour < $3 AND f.counted
        AND coalesce(f.block_time, f.hour) >= $5
    WHERE $5 < $3
), volume AS (
    SELECT sum(transfers)::int8 AS transfers, sum(usd) AS usd, sum(value) AS value
    FROM (
        SELECT coalesce(sum(h.transfers), 0) AS transfers, coalesce(sum(abs(h.volume_usd)), 0) AS usd,
               coalesce(sum(abs(h.volume_value)), 0) AS value
        FROM deps
        JOIN market.flow_hours h ON h.chain = deps.chain AND h.token = deps.token AND h.hour >= $3
        UNION ALL
        SELECT count(*), coalesce(sum(abs(usd)), 0), coalesce(sum(abs(value)), 0) FROM partial
    ) v
)
SELECT NULL::int AS n, NULL::text AS from_addr, NULL::text AS to_addr, (SELECT usd FROM volume) AS usd,
       (SELECT value FROM volume) AS value,
       array_agg(least(greatest(coalesce(rolled_until, '-infinity'), TIMESTAMPTZ '0001-01-01 00:00:00+00'),
                       TIMESTAMPTZ '9999-01-01 00:00:00+00') ORDER BY ord),
       array_agg(version ORDER BY ord), (SELECT transfers FROM volume)
FROM deps
UNION ALL
SELECT deps.n, f.from_addr, f.to_addr, f.usd, f.value, NULL, NULL, NULL
FROM deps
JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token AND f.hour >= deps.open_from AND f.counted
UNION ALL
SELECT n, from_addr, to_addr, usd, value, NULL, NULL, NULL
FROM partial
