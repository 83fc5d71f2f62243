-- Applies address class changes and moves the rollups' cex/dex sums of every hour the address
-- had flows in from its old class to its new one (flow_hours and flow_days), reading the
-- address's flows of closed hours from flow_address_hours and of open hours from market.flows. Input: chain_type, address, entity_type,
-- sets_entity (false: only the pool flag changes), is_pool, version, info, deposit_service ($1-$8,
-- parallel arrays); $9 the entity ids whose type changed (entity_types_apply.sql), whose
-- attributed addresses and deposit addresses are classified again; $10 reset, parallel to $1-$8
-- (an untag came before the change in its batch: it applies whatever version is stored, as it
-- would after that untag). An address's class is market.address_class of its attributed
-- entity's type, its deposit service's type and its pool flag, both types read from
-- market.entity_types (the type of the highest entity version seen, whichever address's record
-- carried it), so every address of one entity counts as the same type; the attribution's own
-- entity type counts only for an entity without an id.
WITH changes AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bool[], $5::bool[], $6::int8[], $7::jsonb[], $8::text[], $10::bool[])
        AS t(chain_type, address, entity_type, sets_entity, is_pool, version, info, deposit_service, reset)
), input AS (
    SELECT * FROM changes
    UNION ALL
    -- the attributed and deposit addresses of the entities whose type changed, without a change
    -- of their own (address_classes_deposit_service and address_classes_entity)
    SELECT c.chain_type, c.address, NULL, false, false, 0, NULL, NULL, false
    FROM market.address_classes c
    WHERE (c.deposit_service = ANY($9::text[]) OR c.info->'entity'->>'id' = ANY($9::text[]))
      AND NOT EXISTS (SELECT 1 FROM changes i WHERE i.chain_type = c.chain_type AND i.address = c.address)
), applied AS (
    -- an attribution older than the stored one changes no attribution (its pool flag still
    -- applies, and the deposit service's type is read again)
    SELECT i.chain_type, i.address,
           market.address_class(c.attributed_type, c.deposit_type, coalesce(c.is_pool, false)) AS old_class,
           CASE WHEN s.sets THEN i.entity_type ELSE c.attributed_type END AS attributed_type,
           CASE WHEN s.sets THEN nullif(i.deposit_service, '') ELSE c.deposit_service END AS deposit_service,
           coalesce(c.is_pool, false) OR i.is_pool AS is_pool,
           CASE WHEN s.sets THEN i.version ELSE coalesce(c.version, 0) END AS version,
           CASE WHEN s.sets THEN i.info ELSE c.info END AS info,
           CASE WHEN s.sets THEN i.info ELSE c.info END->'entity'->>'id' AS entity_id
    FROM input i
    LEFT JOIN market.address_classes c ON c.chain_type = i.chain_type AND c.address = i.address
    CROSS JOIN LATERAL (SELECT i.sets_entity AND (c.version IS NULL OR i.version >= c.version OR i.version = 0 OR i.reset) AS sets) s
), next AS (
    SELECT a.chain_type, a.address, a.old_class,
           coalesce((SELECT e.entity_type FROM market.entity_types e WHERE e.entity_id = a.entity_id), a.attributed_type) AS attributed_type,
           a.deposit_service, a.is_pool, a.version, a.info,
           (SELECT e.entity_type FROM market.entity_types e WHERE e.entity_id = a.deposit_service) AS deposit_type
    FROM applied a
), saved AS (
    INSERT INTO market.address_classes AS c (chain_type, address, attributed_type, deposit_service, deposit_type, is_pool, version, info)
    SELECT chain_type, address, attributed_type, deposit_service, deposit_type, is_pool, version, info FROM next
    ON CONFLICT (chain_type, address) DO UPDATE SET
        attributed_type = excluded.attributed_type, deposit_service = excluded.deposit_service,
        deposit_type = excluded.deposit_type, is_pool = excluded.is_pool, version = excluded.version, info = excluded.info
    RETURNING 1
), moved AS (
    SELECT chain_type, address, old_class, market.address_class(attributed_type, deposit_type, is_pool) AS new_class FROM next
    WHERE old_class IS DISTINCT FROM market.address_class(attributed_type, deposit_type, is_pool)
), open_flows AS (
    -- per chain, its counted rows from its rolled_until on: the subquery is run once per mark
    -- with the chain and hour as its index bounds (OFFSET 0 keeps it from being flattened into
    -- a join that reads every chain's rows), and not at all when no class moved
    SELECT f.chain, f.token, f.hour, f.chain_type, f.from_addr, f.to_addr, f.usd
    FROM market.flow_marks k
    CROSS JOIN LATERAL (
        SELECT * FROM market.flows f
        WHERE f.chain = k.chain AND f.hour >= k.rolled_until AND f.counted
        OFFSET 0
    ) f
    WHERE EXISTS (SELECT 1 FROM moved)
), address_legs AS (
    -- the moved addresses' in and out USD per token and hour: of each chain's closed hours
    -- (before its rolled_until, so a row from it on is never counted next to the transfers it
    -- sums) from flow_address_hours, of its open ones from market.flows (open_flows), so a
    -- chain whose hours stay open long does not make the others' closed hours read
    SELECT a.chain, a.token, a.hour, m.old_class, m.new_class, a.in_usd, a.out_usd
    FROM moved m
    JOIN market.flow_address_hours a ON a.chain_type = m.chain_type AND a.address = m.address
    JOIN market.flow_marks k ON k.chain = a.chain AND a.hour < k.rolled_until
    UNION ALL
    SELECT f.chain, f.token, f.hour, m.old_class, m.new_class, f.usd, 0
    FROM open_flows f
    JOIN moved m ON m.chain_type = f.chain_type AND m.address = f.to_addr
    UNION ALL
    SELECT f.chain, f.token, f.hour, m.old_class, m.new_class, 0, f.usd
    FROM open_flows f
    JOIN moved m ON m.chain_type = f.chain_type AND m.address = f.from_addr
), deltas AS (
    SELECT chain, token, hour,
        -- a cex_deposit address's receipts are CEX inflow and its payments (its sweeps into its
        -- exchange, whose wallet counts them as received) are taken out of it: neither in nor out
        sum(CASE WHEN new_class IN ('cex', 'cex_deposit') THEN in_usd ELSE 0 END - CASE WHEN new_class = 'cex_deposit' THEN out_usd ELSE 0 END
          - CASE WHEN old_class IN ('cex', 'cex_deposit') THEN in_usd ELSE 0 END + CASE WHEN old_class = 'cex_deposit' THEN out_usd ELSE 0 END) AS cex_in,
        sum(CASE WHEN new_class = 'cex' THEN out_usd ELSE 0 END - CASE WHEN old_class = 'cex' THEN out_usd ELSE 0 END) AS cex_out,
        sum(CASE WHEN new_class = 'dex' THEN in_usd ELSE 0 END - CASE WHEN old_class = 'dex' THEN in_usd ELSE 0 END) AS dex_in,
        sum(CASE WHEN new_class = 'dex' THEN out_usd ELSE 0 END - CASE WHEN old_class = 'dex' THEN out_usd ELSE 0 END) AS dex_out
    FROM address_legs
    GROUP BY chain, token, hour
), by_hour AS (
    UPDATE market.flow_hours h SET
        cex_in_usd = h.cex_in_usd + d.cex_in, cex_out_usd = h.cex_out_usd + d.cex_out,
        dex_in_usd = h.dex_in_usd + d.dex_in, dex_out_usd = h.dex_out_usd + d.dex_out
    FROM deltas d
    WHERE h.chain = d.chain AND h.token = d.token AND h.hour = d.hour
    RETURNING 1
), day_deltas AS (
    SELECT chain, token, date_bin('1 day', hour, TIMESTAMPTZ '2000-01-03 00:00:00+00') AS day,
           sum(cex_in) AS cex_in, sum(cex_out) AS cex_out, sum(dex_in) AS dex_in, sum(dex_out) AS dex_out
    FROM deltas
    GROUP BY 1, 2, 3
)
UPDATE market.flow_days y SET
    cex_in_usd = y.cex_in_usd + d.cex_in, cex_out_usd = y.cex_out_usd + d.cex_out,
    dex_in_usd = y.dex_in_usd + d.dex_in, dex_out_usd = y.dex_out_usd + d.dex_out
FROM day_deltas d
WHERE y.chain = d.chain AND y.token = d.token AND y.day = d.day
