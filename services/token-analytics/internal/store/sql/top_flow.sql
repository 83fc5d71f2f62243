-- The addresses with the most flow of the deployments ($1 chains, $2 contracts) since $6 exactly,
-- $3 being the first hour starting at or after $6: the whole hours from $3 on, closed ones
-- (before the chain's rolled_until, so a row from it on is never counted next to the transfers it
-- sums) from flow_address_hours, open ones (from the chain's rolled_until on; every hour of a
-- chain without a mark) from the counted rows of market.flows, through flows_token_hour with the
-- open range's start as its bound; and when $6 is inside an hour, that hour's counted transfers
-- at or after $6 from market.flows (partial), closed or not: the hour rows sum its transfers
-- before $6 too. A copy without its block time (stored before migration 00021, or by a replica
-- of the release before it) is read as at its hour's start, so left out of the partial hour.
--
-- The legs are grouped by the chain's rank among the deployments' chains (n, in chain order) and
-- the address alone: an integer and one text key per leg, where grouping by the chain and taking
-- min(chain_type) hashed and compared two more texts per leg, the most of a token's week of legs.
-- A chain's rows all carry its type (the consumers store each transfer with its chain's type), so
-- the type the classes are joined on is read once per chain, from any of its rows. Ties are
-- ordered by the bytes of the chain and the address (COLLATE "C", whatever the database's
-- collation), as the kept sums' merge in Go orders them (internal/store/topflow_cache.go).
--
-- An address's amounts are read as zero when at most $5 (app.ResidueTolerance) of the window's
-- volume of the deployments (flow_hours from $3 on and the partial hour's transfers, USD against
-- USD, units against units), and none is
-- listed when no transfer counts in the window: the residues float8 sums leave where transfers
-- were undone (a closed hour's row is updated, never deleted). An address whose amounts are all
-- zero moved nothing and is left out.
WITH deps AS (
    SELECT d.chain, d.token, dense_rank() OVER (ORDER BY d.chain COLLATE "C")::int AS n,
           greatest($3::timestamptz, coalesce(k.rolled_until, '-infinity')) AS open_from
    FROM unnest($1::text[], $2::text[]) AS d(chain, token)
    LEFT JOIN market.flow_marks k ON k.chain = d.chain
), partial AS (
    SELECT deps.n, f.from_addr, f.to_addr, f.usd, f.value
    FROM deps
    JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token
        AND f.hour >= $3::timestamptz - interval '1 hour' AND f.hour < $3 AND f.counted
        AND coalesce(f.block_time, f.hour) >= $6
    WHERE $6 < $3
), legs AS (
    SELECT deps.n, a.address, a.in_usd, a.in_value, a.out_usd, a.out_value
    FROM deps
    JOIN market.flow_address_hours a ON a.chain = deps.chain AND a.token = deps.token AND a.hour >= $3
        AND a.hour < deps.open_from
    UNION ALL
    SELECT deps.n, l.address, l.in_usd, l.in_value, l.out_usd, l.out_value
    FROM deps
    JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token AND f.hour >= deps.open_from AND f.counted
    CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
        AS l(address, in_usd, in_value, out_usd, out_value)
    UNION ALL
    SELECT p.n, l.address, l.in_usd, l.in_value, l.out_usd, l.out_value
    FROM partial p
    CROSS JOIN LATERAL (VALUES (p.to_addr, p.usd, p.value, 0::float8, 0::float8), (p.from_addr, 0, 0, p.usd, p.value))
        AS l(address, in_usd, in_value, out_usd, out_value)
), volume AS (
    SELECT sum(transfers) AS transfers, $5::float8 * sum(usd) AS usd, $5::float8 * sum(value) AS value
    FROM (
        SELECT coalesce(sum(h.transfers), 0) AS transfers, coalesce(sum(abs(h.volume_usd)), 0) AS usd,
               coalesce(sum(abs(h.volume_value)), 0) AS value
        FROM deps
        JOIN market.flow_hours h ON h.chain = deps.chain AND h.token = deps.token AND h.hour >= $3
        UNION ALL
        SELECT count(*), coalesce(sum(abs(usd)), 0), coalesce(sum(abs(value)), 0) FROM partial
    ) v
), sums AS (
    SELECT n, address, sum(in_usd) AS in_usd, sum(in_value) AS in_value, sum(out_usd) AS out_usd,
           sum(out_value) AS out_value
    FROM legs
    GROUP BY n, address
), settled AS (
    SELECT s.n, s.address,
           CASE WHEN abs(s.in_usd) <= v.usd THEN 0 ELSE s.in_usd END AS in_usd,
           CASE WHEN abs(s.in_value) <= v.value THEN 0 ELSE s.in_value END AS in_value,
           CASE WHEN abs(s.out_usd) <= v.usd THEN 0 ELSE s.out_usd END AS out_usd,
           CASE WHEN abs(s.out_value) <= v.value THEN 0 ELSE s.out_value END AS out_value
    FROM sums s, volume v
    WHERE v.transfers > 0
), agg AS (
    SELECT * FROM settled
    WHERE in_usd <> 0 OR in_value <> 0 OR out_usd <> 0 OR out_value <> 0
    ORDER BY in_usd + out_usd DESC, n, address COLLATE "C"
    LIMIT $4
), chains AS (
    SELECT DISTINCT ON (n) n, chain FROM deps ORDER BY n
)
SELECT k.chain, g.address, g.in_usd, g.in_value, g.out_usd, g.out_value, c.info
FROM agg g
JOIN chains k ON k.n = g.n
CROSS JOIN LATERAL (
    SELECT coalesce(
        (SELECT a.chain_type FROM market.flow_address_hours a WHERE a.chain = k.chain LIMIT 1),
        (SELECT f.chain_type FROM market.flows f WHERE f.chain = k.chain LIMIT 1)) AS chain_type
) t
LEFT JOIN market.address_classes c ON c.chain_type = t.chain_type AND c.address = g.address
ORDER BY g.in_usd + g.out_usd DESC, k.chain COLLATE "C", g.address COLLATE "C"
