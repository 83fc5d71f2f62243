-- +goose Up
-- A reorg taking back an address's first or last transfer gives it back the time of its first
-- or last transfer that is still counted (docs/intelligence.md, "Reorgs and activity times").
-- Those are either in the block journal (block_facts, not orphaned), which a reorg reads, or
-- settled: counted but outside the journal (aged out of it, or never journaled).
-- settled_activity keeps, per address, the count and the first and last time of its settled
-- transfers, so the new time is exact: min/max of the settled extremes and of the address's
-- surviving journal transfers. A reorg never takes back a settled transfer (it is outside the
-- journal), so the table only grows.
--
-- goose runs this file as one transaction. It takes store.reorgLock exclusively first, so no
-- transfer batch (whose prune moves transfers out of the journal) or reorg commits between the
-- trigger's creation and the counting below.
SELECT pg_advisory_xact_lock(7283400222);

CREATE TABLE intel.settled_activity (
    chain_type     text   NOT NULL,
    address        text   NOT NULL,
    transfer_count bigint NOT NULL,
    first_ms       bigint NOT NULL,
    last_ms        bigint NOT NULL,
    PRIMARY KEY (chain_type, address)
);

-- journal_transfers lists the counted transfers of the given journal rows, one row per address a
-- transfer touches (a transfer to itself once, as address_activity counts it); rows journaled
-- before the journal kept times (migration 4) take their block's newest time.
-- +goose StatementBegin
CREATE FUNCTION intel.journal_transfers(b intel.block_facts) RETURNS TABLE (chain_type text, address text, ms bigint)
LANGUAGE sql STABLE AS $$
    SELECT b.chain_type, p.address, x.ms
    FROM unnest(b.from_addr, b.to_addr,
                CASE WHEN cardinality(b.ms) = cardinality(b.from_addr) THEN b.ms
                     ELSE array_fill(b.newest_ms, ARRAY[cardinality(b.from_addr)]) END) x(f, t, ms)
    CROSS JOIN LATERAL (VALUES (x.f), (NULLIF(x.t, x.f))) p(address)
    WHERE NOT b.orphaned AND p.address IS NOT NULL
$$;
-- +goose StatementEnd

-- Pruning the journal (store.blockFacts.save deletes the blocks older than JournalRetention)
-- settles the counted transfers of the blocks it deletes: one statement trigger over the deleted
-- rows, writing the addresses in key order (batches prune side by side). As a trigger it also
-- settles the prunes of replicas of the previous release during a rolling upgrade. Orphaned
-- blocks' transfers are not counted, so not settled.
-- +goose StatementBegin
CREATE FUNCTION intel.settle_pruned_blocks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO intel.settled_activity AS s (chain_type, address, transfer_count, first_ms, last_ms)
    SELECT j.chain_type, j.address, count(*), min(j.ms), max(j.ms)
    FROM pruned b CROSS JOIN LATERAL intel.journal_transfers(b) j
    GROUP BY 1, 2 ORDER BY j.chain_type COLLATE "C", j.address COLLATE "C"
    ON CONFLICT (chain_type, address) DO UPDATE SET transfer_count = s.transfer_count + excluded.transfer_count,
        first_ms = LEAST(s.first_ms, excluded.first_ms), last_ms = GREATEST(s.last_ms, excluded.last_ms);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER block_facts_settle AFTER DELETE ON intel.block_facts
    REFERENCING OLD TABLE AS pruned FOR EACH STATEMENT EXECUTE FUNCTION intel.settle_pruned_blocks();

-- The existing activity: an address's settled transfers are those its count has beyond its
-- journal transfers. Their first time is taken as the address's first_ms, and their last time as
-- its last_ms when it has no journal transfer or its last_ms is newer than them (exact: the
-- extreme is then a settled transfer's). Otherwise the settled last time is unknown, between
-- first_ms and the newest journal transfer, and first_ms stands in for it, a lower bound that
-- the prunes of the next two days raise to the exact value (they settle every transfer the
-- journal holds now). first_ms is exact but when a settled transfer is newer than the address's
-- oldest journal transfer (another chain of its chain type, a transfer without a block hash):
-- then it is that journal transfer's time, exact again once the prunes settle it.
-- docs/intelligence.md, Known limits.
INSERT INTO intel.settled_activity (chain_type, address, transfer_count, first_ms, last_ms)
SELECT a.chain_type, a.address, a.transfer_count - COALESCE(j.n, 0), a.first_ms,
       CASE WHEN j.n IS NULL OR a.last_ms > j.last_ms THEN a.last_ms ELSE a.first_ms END
FROM intel.address_activity a
LEFT JOIN (SELECT j.chain_type, j.address, count(*) AS n, max(j.ms) AS last_ms
           FROM intel.block_facts b CROSS JOIN LATERAL intel.journal_transfers(b) j
           GROUP BY 1, 2) j ON j.chain_type = a.chain_type AND j.address = a.address
WHERE a.transfer_count > COALESCE(j.n, 0);

-- +goose Down
DROP TRIGGER block_facts_settle ON intel.block_facts;
DROP FUNCTION intel.settle_pruned_blocks(), intel.journal_transfers(intel.block_facts);
DROP TABLE intel.settled_activity;
