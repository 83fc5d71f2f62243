-- The end of flows_close.sql: moves the mark (never back: pruning may have moved it to the
-- flow horizon meanwhile) and counts what was written.
    RETURNING 1
), moved AS (
    UPDATE market.flow_marks SET rolled_until = greatest(rolled_until, $3) WHERE chain = $1
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FILTER (WHERE counted) FROM src), (SELECT count(*) FROM moved)
