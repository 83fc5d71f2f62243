-- The natural ids of a batch: $1 chains, $2 ids (parallel arrays).
WITH keys AS (
    SELECT DISTINCT chain, id FROM unnest($1::text[], $2::text[]) AS k(chain, id)
)
