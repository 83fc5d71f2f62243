-- Records blocks seen on chain.blocks.v1 and chain.transactions.v1, one element per block of
-- $1..$6 (the caller merges a batch's records per block first and orders them by key, so two
-- writers lock shared rows in one order): a redelivered or partial block only raises its
-- transaction count to the highest index seen and lowers its gas price to the lowest seen
-- (LEAST ignores a null).
INSERT INTO market.network_blocks AS b (chain, block_hash, number, time, transactions, min_gas_price)
SELECT u.chain, u.block_hash, u.number, u.time, u.transactions, u.min_gas_price
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::int[], $6::float8[]) WITH ORDINALITY
    AS u(chain, block_hash, number, time, transactions, min_gas_price, n)
ORDER BY n
ON CONFLICT (chain, block_hash) DO UPDATE
SET transactions = GREATEST(b.transactions, excluded.transactions),
    min_gas_price = LEAST(b.min_gas_price, excluded.min_gas_price)
