-- Stores the copies of the natural ids the batch claimed first (flow_ids_lock returned them, and
-- each occurs once in the batch; $1..$10 as flows_insert): no other copy of them exists, so each
-- counts unless its block is orphaned, as flows_settle would decide, and the counted ones go
-- straight to the rollups (flows_rollup_tail) without a second write of their flows row.
WITH changed AS (
    INSERT INTO market.flows AS f (chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd, counted)
    SELECT t.chain, t.id, t.chain_type, t.block_hash, t.hour, t.token, t.from_addr, t.to_addr, t.value, t.usd,
           NOT EXISTS (SELECT 1 FROM market.orphaned_blocks o WHERE o.chain = t.chain AND o.block_hash = t.block_hash)
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
                $7::text[], $8::text[], $9::float8[], $10::float8[])
        AS t(chain, id, chain_type, block_hash, hour, token, from_addr, to_addr, value, usd)
    ON CONFLICT (chain, id, block_hash) DO NOTHING
    RETURNING f.chain, f.chain_type, f.hour, f.token, f.from_addr, f.to_addr, f.value, f.usd, f.counted
), signed AS (
    SELECT chain, chain_type, hour, token, from_addr, to_addr, value, usd, 1::float8 AS sign FROM changed WHERE counted
)
