-- The addresses with the most flow of the deployments ($1 chains, $2 contracts) since $3.
WITH deps AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS d(chain, token)
), agg AS (
    SELECT a.chain, a.address, min(a.chain_type) AS chain_type, sum(a.in_usd) AS in_usd, sum(a.in_value) AS in_value,
           sum(a.out_usd) AS out_usd, sum(a.out_value) AS out_value
    FROM deps
    JOIN market.flow_address_hours a ON a.chain = deps.chain AND a.token = deps.token AND a.hour >= $3
    GROUP BY a.chain, a.address
    ORDER BY sum(a.in_usd) + sum(a.out_usd) DESC, a.chain, a.address
    LIMIT $4
)
SELECT g.chain, g.address, g.in_usd, g.in_value, g.out_usd, g.out_value, c.info
FROM agg g
LEFT JOIN market.address_classes c ON c.chain_type = g.chain_type AND c.address = g.address
ORDER BY g.in_usd + g.out_usd DESC, g.chain, g.address
