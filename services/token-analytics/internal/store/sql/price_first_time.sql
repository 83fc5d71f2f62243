-- The time of the oldest stored point (daily or hourly) of the pricing id $1, NULL when there is
-- none: one probe of the primary key per granularity.
SELECT least(
    (SELECT min(time) FROM market.prices WHERE pricing_id = $1 AND granularity = 1),
    (SELECT min(time) FROM market.prices WHERE pricing_id = $1 AND granularity = 2))
