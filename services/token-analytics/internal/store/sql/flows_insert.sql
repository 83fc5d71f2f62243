-- Inserts transfers by natural id (a redelivered one is skipped) and adds the new, counted ones
-- to the hourly rollups. $1..$10 are parallel arrays, one element per transfer.
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
                         $7::text[], $8::text[], $9::float8[], $10::float8[])
        AS t(chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd)
), changed AS (
    INSERT INTO market.flows AS f (chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd, counted)
    SELECT i.chain, i.id, i.chain_type, i.block_hash, i.hour, i.token, i.from_addr, i.to_addr, i.value, i.usd,
           NOT EXISTS (SELECT 1 FROM market.orphaned_blocks o WHERE o.chain = i.chain AND o.block_hash = i.block_hash)
    FROM input i
    ON CONFLICT (chain, id) DO NOTHING
    RETURNING f.chain, f.chain_type, f.hour, f.token, f.from_addr, f.to_addr, f.value, f.usd, f.counted
), signed AS (
    SELECT chain, chain_type, hour, token, from_addr, to_addr, value, usd, 1::float8 AS sign FROM changed WHERE counted
)
