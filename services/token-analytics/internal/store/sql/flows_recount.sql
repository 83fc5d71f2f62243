-- Flips counted on the transfers of the given blocks of one chain ($1) to $3 and takes them out
-- of (or back into) the rollups: $2 are block hashes.
WITH changed AS (
    UPDATE market.flows f SET counted = $3
    WHERE f.chain = $1 AND f.block_hash = ANY($2::text[]) AND f.counted <> $3
    RETURNING f.chain, f.chain_type, f.hour, f.token, f.from_addr, f.to_addr, f.value, f.usd
), signed AS (
    SELECT chain, chain_type, hour, token, from_addr, to_addr, value, usd,
           CASE WHEN $3 THEN 1::float8 ELSE -1::float8 END AS sign FROM changed
)
