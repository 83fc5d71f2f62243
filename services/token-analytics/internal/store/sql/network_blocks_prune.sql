-- Drops blocks more than two days of chain time older than the newest of the batch, per chain
-- ($1 chains, $2 their newest block times): /networks/status reads the last day only.
DELETE FROM market.network_blocks b
USING unnest($1::text[], $2::timestamptz[]) AS n(chain, newest)
WHERE b.chain = n.chain AND b.time < n.newest - interval '2 days'
