-- Records blocks seen on chain.transactions.v1, one element per block of $1..$6 (the caller
-- merges a batch's transactions per block first): a redelivered or partial block only raises its
-- transaction count to the highest index seen and lowers its gas price to the lowest seen
-- (LEAST ignores a null).
INSERT INTO market.network_blocks AS b (chain, block_hash, number, time, transactions, min_gas_price)
SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[], $5::int[], $6::float8[])
ON CONFLICT (chain, block_hash) DO UPDATE
SET transactions = GREATEST(b.transactions, excluded.transactions),
    min_gas_price = LEAST(b.min_gas_price, excluded.min_gas_price)
