-- Closes the hours [$2, $3) of chain $1: builds their flow_address_hours rows from the counted
-- rows of market.flows (one row per token, hour and address; no row exists from the chain's
-- rolled_until on, so they are inserted) and moves the chain's rolled_until to $3. The hour
-- range is found through the BRIN index on flows.hour. Returns the rows inserted and the
-- transfers they sum.
WITH src AS (
    SELECT f.chain, f.token, f.hour, f.chain_type, f.from_addr, f.to_addr, f.usd, f.value
    FROM market.flows f
    WHERE f.chain = $1 AND f.hour >= $2 AND f.hour < $3 AND f.counted
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
    UPDATE market.flow_marks SET rolled_until = $3 WHERE chain = $1
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM src), (SELECT count(*) FROM moved)
