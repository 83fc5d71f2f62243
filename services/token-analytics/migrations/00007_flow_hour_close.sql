-- +goose Up
-- flow_address_hours is built per closed hour from the counted rows of market.flows
-- (internal/store/sql/flows_close.sql) instead of in every transfer batch. Per chain,
-- rolled_until is the first hour not yet built: flow_address_hours holds every counted transfer
-- of the hours before it (a late copy, reorg or relabel of such an hour updates its rows in
-- place), and the hours from it on are read from market.flows. head is the newest hour a
-- transfer batch delivered, at most the clock's hour plus one (internal/store/close.go,
-- headSkew); hours before it, and it once the clock has left it, are closed.
CREATE TABLE market.flow_marks (
    chain        text PRIMARY KEY,
    rolled_until timestamptz NOT NULL DEFAULT '-infinity',
    head         timestamptz NOT NULL DEFAULT '-infinity'
);
-- Every counted transfer stored so far is in flow_address_hours already. A transfer claiming a
-- time past the clock's next hour moves no head (as in a transfer batch), so its hour stays
-- open; readers ignore flow_address_hours from rolled_until on, and the close rebuilds that
-- hour's rows from market.flows.
INSERT INTO market.flow_marks (chain, rolled_until, head)
SELECT chain, h + interval '1 hour', h
FROM (
    SELECT chain, least(max(hour), date_trunc('hour', now() + interval '1 hour', 'UTC')) AS h
    FROM market.flows GROUP BY chain
) m;

-- The open hours of a token, read by top_flow.
CREATE INDEX flows_token_hour ON market.flows (chain, token, hour);
-- The hours of a chain, read by the hour close and by a class change's open hours (the
-- transfers of a chain's hour share one key, which the B-tree stores deduplicated).
CREATE INDEX flows_chain_hour ON market.flows (chain, hour);

-- +goose Down
DROP INDEX market.flows_chain_hour;
DROP INDEX market.flows_token_hour;
DELETE FROM market.flow_address_hours a
USING market.flow_marks m WHERE m.chain = a.chain AND a.hour >= m.rolled_until;
INSERT INTO market.flow_address_hours AS a (chain, token, hour, address, chain_type, in_usd, in_value, out_usd, out_value)
SELECT f.chain, f.token, f.hour, l.address, min(f.chain_type), sum(l.in_usd), sum(l.in_value), sum(l.out_usd), sum(l.out_value)
FROM market.flows f
JOIN market.flow_marks m ON m.chain = f.chain AND f.hour >= m.rolled_until
CROSS JOIN LATERAL (VALUES (f.to_addr, f.usd, f.value, 0::float8, 0::float8), (f.from_addr, 0, 0, f.usd, f.value))
    AS l(address, in_usd, in_value, out_usd, out_value)
WHERE f.counted
GROUP BY 1, 2, 3, 4
ON CONFLICT (chain, token, hour, address) DO UPDATE SET
    in_usd = a.in_usd + excluded.in_usd, in_value = a.in_value + excluded.in_value,
    out_usd = a.out_usd + excluded.out_usd, out_value = a.out_value + excluded.out_value;
DROP TABLE market.flow_marks;
