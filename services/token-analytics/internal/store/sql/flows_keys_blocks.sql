-- The natural ids with a copy in one of the blocks $2 of chain $1.
WITH keys AS (
    SELECT DISTINCT chain, id FROM market.flows WHERE chain = $1 AND block = ANY($2::text[])
)
