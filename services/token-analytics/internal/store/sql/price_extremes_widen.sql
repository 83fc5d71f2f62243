-- Widens the stored extremes of each pricing id of a batch of history points ($1 ids, $2
-- prices, in any order) to the batch's highest and lowest price, creating the rows of new ids.
-- It runs first in the write's transaction, in pricing id order: the rows it inserts or updates
-- (or only locks, when nothing widens) stay locked until commit, so writers of the same pricing
-- id follow each other, and the statements after it read no other writer's uncommitted points
-- of those ids.
INSERT INTO market.price_extremes AS e (pricing_id, high, low)
SELECT pricing_id, max(price), min(price)
FROM unnest($1::text[], $2::float8[]) AS t(pricing_id, price)
GROUP BY pricing_id
ORDER BY pricing_id
ON CONFLICT (pricing_id) DO UPDATE SET
    high = greatest(e.high, excluded.high), low = least(e.low, excluded.low)
WHERE excluded.high > e.high OR excluded.low < e.low
