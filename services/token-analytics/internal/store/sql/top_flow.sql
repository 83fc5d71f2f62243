-- The addresses with the most flow of the deployments ($1 chains, $2 contracts) since $3: closed
-- hours (before the chain's rolled_until, so a row from it on is never counted next to the
-- transfers it sums) from flow_address_hours, open ones (from the chain's rolled_until on; every hour of a
-- chain without a mark) from the counted rows of market.flows, through flows_token_hour with the
-- open range's start as its bound.
WITH deps AS (
    SELECT d.chain, d.token, greatest($3::timestamptz, coalesce(k.rolled_until, '-infinity')) AS open_from
    FROM unnest($1::text[], $2::text[]) AS d(chain, token)
    LEFT JOIN market.flow_marks k ON k.chain = d.chain
), legs AS (
    SELECT a.chain, a.address, a.chain_type, a.in_usd, a.in_value, a.out_usd, a.out_value
    FROM deps
    JOIN market.flow_address_hours a ON a.chain = deps.chain AND a.token = deps.token AND a.hour >= $3
        AND a.hour < deps.open_from
    UNION ALL
    SELECT f.chain, l.address, f.chain_type, l.in_usd, l.in_value, l.out_usd, l.out_value
    FROM deps
    JOIN market.flows f ON f.chain = deps.chain AND f.token = deps.token AND f.hour >= deps.open_from AND f.counted
    CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
        AS l(address, in_usd, in_value, out_usd, out_value)
), agg AS (
    SELECT chain, address, min(chain_type) AS chain_type, sum(in_usd) AS in_usd, sum(in_value) AS in_value,
           sum(out_usd) AS out_usd, sum(out_value) AS out_value
    FROM legs
    GROUP BY chain, address
    ORDER BY sum(in_usd) + sum(out_usd) DESC, chain, address
    LIMIT $4
)
SELECT g.chain, g.address, g.in_usd, g.in_value, g.out_usd, g.out_value, c.info
FROM agg g
LEFT JOIN market.address_classes c ON c.chain_type = g.chain_type AND c.address = g.address
ORDER BY g.in_usd + g.out_usd DESC, g.chain, g.address
