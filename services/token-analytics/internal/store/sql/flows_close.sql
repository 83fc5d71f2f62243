-- Closes hours: per chain, builds the flow_address_hours rows of the hours from rolled_until to
-- its target from the counted rows of market.flows (one row per token, hour and address) and
-- moves rolled_until to the target. The target is the chain's newest delivered hour or $1 (the
-- clock's hour), whichever is earlier, or with $2 the hour after the newest (every hour
-- delivered). No flow_address_hours row exists from rolled_until on, so the rows are inserted.
-- Returns the rows inserted, the transfers they sum and the chains whose hours were closed.
WITH todo AS (
    SELECT chain, rolled_until,
           CASE WHEN $2::bool THEN head + interval '1 hour' ELSE least(head, $1::timestamptz) END AS target
    FROM market.flow_marks
), src AS (
    SELECT f.chain, f.token, f.hour, f.chain_type, f.from_addr, f.to_addr, f.usd, f.value
    FROM todo t
    JOIN market.flows f ON f.chain = t.chain AND f.hour >= t.rolled_until AND f.hour < t.target
    WHERE t.target > t.rolled_until AND f.counted
), ins AS (
    INSERT INTO market.flow_address_hours (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
    SELECT s.chain, s.token, s.hour, l.address, min(s.chain_type), sum(l.in_usd), sum(l.in_value), sum(l.out_usd), sum(l.out_value)
    FROM src s
    CROSS JOIN LATERAL (VALUES (s.to_addr, s.usd, s.value, 0::float8, 0::float8), (s.from_addr, 0, 0, s.usd, s.value))
        AS l(address, in_usd, in_value, out_usd, out_value)
    GROUP BY 1, 2, 3, 4
    ORDER BY 1, 2, 3, 4
    RETURNING 1
), moved AS (
    UPDATE market.flow_marks k SET rolled_until = t.target
    FROM todo t
    WHERE k.chain = t.chain AND t.target > t.rolled_until
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM src), (SELECT count(*) FROM moved)
