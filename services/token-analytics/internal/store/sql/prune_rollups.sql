-- Deletes up to $2 rows each of flow_address_hours and flow_hours of hours before $1, and of
-- flow_days of days before $1 ($1 is a day's start). Returns the rows deleted from each.
WITH a AS (
    DELETE FROM market.flow_address_hours
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM market.flow_address_hours WHERE hour < $1 LIMIT $2))
    RETURNING 1
), h AS (
    DELETE FROM market.flow_hours
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM market.flow_hours WHERE hour < $1 LIMIT $2))
    RETURNING 1
), d AS (
    DELETE FROM market.flow_days
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM market.flow_days WHERE day < $1 LIMIT $2))
    RETURNING 1
)
SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM h), (SELECT count(*) FROM d)
