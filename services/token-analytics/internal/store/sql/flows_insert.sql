-- Stores the copies of a batch's transfers (one per chain, natural id and block; a redelivered
-- copy is skipped), uncounted: flows_settle decides which copy of each id counts. $1..$11 are
-- parallel arrays, one element per transfer.
INSERT INTO market.flows (chain, id, chain_type, block, hour, token, from_addr, to_addr, value, usd, counted, block_time)
SELECT chain, id, chain_type, block, hour, token, from_addr, to_addr, value, usd, false, block_time
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
            $7::text[], $8::text[], $9::float8[], $10::float8[], $11::timestamptz[])
    AS t(chain, id, chain_type, block, hour, token, from_addr, to_addr, value, usd, block_time)
ON CONFLICT (chain, id, block) DO NOTHING
