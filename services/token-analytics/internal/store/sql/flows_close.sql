-- Closes the hours [$2, $3) of chain $1: builds their flow_address_hours rows from the counted
-- copies in market.flows (one row per token, hour and address) and moves the chain's
-- rolled_until to $3. Followed by flows_close_end.sql: a plain insert, which fails (23505) when
-- a row of the range exists already; with flows_close_rebuild.sql between them (what the close
-- runs then) a row there is set to the rebuilt sums instead, so closing a range twice, or over
-- rows written from rolled_until on (by a replica of the previous model during a rolling
-- upgrade, or as migration 00007 left a far-future hour), gives the same rows. Every such row
-- stems from a copy in market.flows of its key: a key whose copies are all uncounted gets a
-- row (of zeros) only when one is there. The range is found through flows_chain_hour. Returns
-- the rows written and the counted transfers they sum.
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
