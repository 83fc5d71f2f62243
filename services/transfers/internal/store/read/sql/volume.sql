-- Exchange volume of a set of addresses ($1), per chain, day and exchange: USD the set sent to
-- an exchange's addresses (deposited) and received from them (withdrawn), from the pair rollups.
-- An exchange address is one attributed to an entity of type cex (the exchange is that entity)
-- or a deposit address (the exchange is its deposit service). Transfers inside the set are not
-- volume. $2: the chains, NULL for all.
WITH s AS MATERIALIZED (SELECT DISTINCT unnest($1::text[]) AS a),
p AS (
    SELECT p.chain, p.bucket, p.to_addr AS cp, p.usd AS dep, 0::numeric AS wd
    FROM s JOIN transfers.pair_hourly p ON p.from_addr = s.a
    UNION ALL
    SELECT p.chain, p.bucket, p.from_addr, 0, p.usd
    FROM s JOIN transfers.pair_hourly p ON p.to_addr = s.a
), x AS (
    SELECT p.chain, date_trunc('day', p.bucket, 'UTC') AS day,
           CASE WHEN a.entity_type = 'cex' THEN a.entity_id ELSE a.deposit_service_id END AS ex, p.dep, p.wd
    FROM p JOIN transfers.attributions a ON a.address = p.cp
    WHERE (a.entity_type = 'cex' OR a.deposit_service_id <> '')
      AND NOT EXISTS (SELECT 1 FROM s WHERE s.a = p.cp)
      AND ($2::text[] IS NULL OR p.chain = ANY($2::text[]))
), g AS (
    SELECT chain, day, ex, sum(dep) AS dep, sum(wd) AS wd FROM x GROUP BY chain, day, ex
)
SELECT g.chain, g.day, g.ex,
       coalesce((SELECT e.entity->>'name' FROM transfers.attributions e
                 WHERE e.entity_id = g.ex AND e.entity IS NOT NULL LIMIT 1), g.ex),
       g.dep::float8, g.wd::float8
FROM g ORDER BY g.chain, g.day, g.ex
