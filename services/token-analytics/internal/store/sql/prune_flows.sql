-- Deletes the copies of up to $2 natural ids whose every copy is of an hour before $1. Returns
-- the copies deleted.
WITH old AS (
    SELECT f.chain, f.id
    FROM market.flows f
    WHERE f.hour < $1
      AND NOT EXISTS (SELECT 1 FROM market.flows g WHERE g.chain = f.chain AND g.id = f.id AND g.hour >= $1)
    LIMIT $2
), copies AS (
    DELETE FROM market.flows f
    USING (SELECT DISTINCT chain, id FROM old) o
    WHERE f.chain = o.chain AND f.id = o.id
    RETURNING 1
)
SELECT count(*) FROM copies
