-- Recomputes the extremes of the pricing ids $1 from their whole stored history: only for ids
-- where a write replaced a point holding the stored high with a lower price or the stored low
-- with a higher one (the widening cannot narrow). The rows are locked by the write's widening.
UPDATE market.price_extremes e SET high = h.high, low = h.low
FROM (SELECT pricing_id, max(price) AS high, min(price) AS low FROM market.prices
      WHERE pricing_id = ANY($1) GROUP BY pricing_id) h
WHERE e.pricing_id = h.pricing_id
