-- The counted transfers of the deployments ($1 chains, $2 contracts) from the hours $4 on (per
-- deployment, in $1's order: where its kept closed sums end, at least $3), read from market.flows
-- through flows_token_hour, each with its chain's rank n among the deployments' chains (as
-- top_flow_closed.sql ranks them): Go adds each to its receiver's in and its sender's out, which
-- costs less than grouping the legs here (a sort or hash of every leg). The rows of hours closed
-- since the kept sums were read come from flows too: flows keeps every counted copy, and
-- flow_address_hours' rows of those hours sum exactly them. One more row, its n NULL, is the
-- stamp of the closed rows in the same snapshot, as in top_flow_closed.sql: the kept sums are
-- used only when it equals theirs.
WITH deps AS (
    SELECT d.chain, d.token, d.ord, dense_rank() OVER (ORDER BY d.chain COLLATE "C")::int AS n,
           k.rolled_until, coalesce(v.version, 0) AS version, greatest($3::timestamptz, d.open_from) AS open_from
    FROM unnest($1::text[], $2::text[], $4::timestamptz[]) WITH ORDINALITY AS d(chain, token, open_from, ord)
    LEFT JOIN market.flow_marks k ON k.chain = d.chain
    LEFT JOIN market.flow_address_versions v ON v.chain = d.chain AND v.token = d.token
)
SELECT NULL::int AS n, NULL::text AS from_addr, NULL::text AS to_addr, 0::float8 AS usd, 0::float8 AS value,
       array_agg(least(greatest(coalesce(rolled_until, '-infinity'), TIMESTAMPTZ '0001-01-01 00:00:00+00'),
                       TIMESTAMPTZ '9999-01-01 00:00:00+00') ORDER BY ord),
       array_agg(version ORDER BY ord)
FROM deps
UNION ALL
SELECT deps.n, f.from_addr, f.to_addr, f.usd, f.value, NULL, NULL
FROM deps
JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token AND f.hour >= deps.open_from AND f.counted
