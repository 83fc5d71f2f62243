-- The deployments' ($1 chains, $2 contracts) volume in buckets of $5 over [$3, $4), buckets
-- aligned to a Monday 00:00 UTC.
WITH deps AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS d(chain, token)
)
SELECT date_bin($5::interval, h.hour, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS bucket,
       sum(h.volume_usd), sum(h.volume_value), sum(h.transfers)::int8
FROM deps
JOIN market.flow_hours h ON h.chain = deps.chain AND h.token = deps.token AND h.hour >= $3 AND h.hour < $4
GROUP BY 1
ORDER BY 1
