-- The deployments' ($1 chains, $2 contracts) volume in buckets of $5 over [$7, $4), buckets
-- aligned to a Monday 00:00 UTC ($4 a bucket's end), counting exactly the transfers from $7 on:
-- the whole days from $6 on from flow_days (one row per token-day; $6 = $4 when the buckets are
-- not whole days), the whole hours [$3, $6) from flow_hours ($3 the first hour starting at or
-- after $7), and when $7 is inside an hour, that hour's counted transfers at or after $7 from
-- market.flows (the hour's row sums its transfers before $7 too). A copy without its block time
-- (stored before migration 00021, or by a replica of the release before it) is read as at its
-- hour's start, so left out of that partial hour. flow_days rows always equal the sum of their
-- day's flow_hours rows, and both primary keys include the volumes (index-only scans).
WITH deps AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS d(chain, token)
), parts AS (
    SELECT h.day AS t, h.volume_usd AS usd, h.volume_value AS value, h.transfers::int8 AS transfers
    FROM deps
    JOIN market.flow_days h ON h.chain = deps.chain AND h.token = deps.token AND h.day >= $6 AND h.day < $4
    UNION ALL
    SELECT h.hour, h.volume_usd, h.volume_value, h.transfers::int8
    FROM deps
    JOIN market.flow_hours h ON h.chain = deps.chain AND h.token = deps.token AND h.hour >= $3 AND h.hour < $6
    UNION ALL
    SELECT f.hour, f.usd, f.value, 1::int8
    FROM deps
    JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token
        AND f.hour >= $3::timestamptz - interval '1 hour' AND f.hour < $3 AND f.counted
        AND coalesce(f.block_time, f.hour) >= $7
    WHERE $7 < $3
)
SELECT date_bin($5::interval, t, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS bucket,
       sum(usd), sum(value), sum(transfers)::int8
FROM parts
GROUP BY 1
ORDER BY 1
