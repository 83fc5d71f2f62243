-- The per-address sums of the closed hours since $3 of the deployments ($1 chains, $2 contracts):
-- flow_address_hours before each chain's rolled_until, grouped by the chain's rank among the
-- deployments' chains (n, as top_flow.sql) and the address, for top_flow's kept sums
-- (internal/store/topflow_cache.go). One more row, its n NULL, is the stamp the sums are valid
-- under, read in the same snapshot: per deployment (in $1's order) its chain's rolled_until
-- (clamped as flow_marks.sql does) and its flow_address_versions version (0 without a row).
WITH deps AS (
    SELECT d.chain, d.token, d.ord, dense_rank() OVER (ORDER BY d.chain COLLATE "C")::int AS n,
           k.rolled_until, coalesce(v.version, 0) AS version,
           greatest($3::timestamptz, coalesce(k.rolled_until, '-infinity')) AS open_from
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS d(chain, token, ord)
    LEFT JOIN market.flow_marks k ON k.chain = d.chain
    LEFT JOIN market.flow_address_versions v ON v.chain = d.chain AND v.token = d.token
)
SELECT NULL::int AS n, NULL::text AS address, 0::float8, 0::float8, 0::float8, 0::float8,
       array_agg(least(greatest(coalesce(rolled_until, '-infinity'), TIMESTAMPTZ '0001-01-01 00:00:00+00'),
                       TIMESTAMPTZ '9999-01-01 00:00:00+00') ORDER BY ord),
       array_agg(version ORDER BY ord)
FROM deps
UNION ALL
SELECT deps.n, a.address, sum(a.in_usd), sum(a.in_value), sum(a.out_usd), sum(a.out_value), NULL, NULL
FROM deps
JOIN market.flow_address_hours a ON a.chain = deps.chain AND a.token = deps.token AND a.hour >= $3
    AND a.hour < deps.open_from
GROUP BY deps.n, a.address
-- as top_flow.sql: an address whose rows sum to nothing (its transfers undone) is left out
HAVING sum(a.in_usd) <> 0 OR sum(a.in_value) <> 0 OR sum(a.out_usd) <> 0 OR sum(a.out_value) <> 0
