-- Closes the hours [$2, $3) of chain $1: builds their flow_address_hours rows from the counted
-- copies in market.flows (one row per token, hour and address) and moves the chain's
-- rolled_until to $3. It rebuilds rather than adds: a row already there (written from
-- rolled_until on by a replica of the previous model during a rolling upgrade, or seeded by
-- migration 00007 for a far-future hour) is set to the rebuilt sums, and one of a key whose
-- every copy is uncounted to zero, so closing a range twice or over such rows gives the same
-- rows. Every row there stems from a copy in market.flows of its key. The range is found through
-- flows_chain_hour. Returns the rows written and the counted transfers they sum.
WITH src AS (
    SELECT f.chain, f.token, f.hour, f.chain_type, f.from_addr, f.to_addr, f.usd, f.value, f.counted
    FROM market.flows f
    WHERE f.chain = $1 AND f.hour >= $2 AND f.hour < $3
), ins AS (
    INSERT INTO market.flow_address_hours AS a (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
    SELECT s.chain, s.token, s.hour, l.address, min(s.chain_type),
           coalesce(sum(l.in_usd) FILTER (WHERE s.counted), 0), coalesce(sum(l.in_value) FILTER (WHERE s.counted), 0),
           coalesce(sum(l.out_usd) FILTER (WHERE s.counted), 0), coalesce(sum(l.out_value) FILTER (WHERE s.counted), 0)
    FROM src s
    CROSS JOIN LATERAL (VALUES (s.to_addr, s.usd, s.value, 0::float8, 0::float8), (s.from_addr, 0, 0, s.usd, s.value))
        AS l(address, in_usd, in_value, out_usd, out_value)
    GROUP BY 1, 2, 3, 4
    HAVING bool_or(s.counted) OR EXISTS (
        SELECT 1 FROM market.flow_address_hours x
        WHERE x.chain = s.chain AND x.token = s.token AND x.hour = s.hour AND x.address = l.address)
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (chain, token, hour, address) DO UPDATE SET
        in_usd = excluded.in_usd, in_value = excluded.in_value, out_usd = excluded.out_usd, out_value = excluded.out_value
    RETURNING 1
), moved AS (
    UPDATE market.flow_marks SET rolled_until = $3 WHERE chain = $1
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FILTER (WHERE counted) FROM src), (SELECT count(*) FROM moved)
