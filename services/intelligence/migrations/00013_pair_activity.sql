-- +goose Up
-- An operator entity's summary counts each transfer touching its attributed addresses once
-- (docs/intelligence.md, "Entity summary volume"): the sum of its addresses' activity counts a
-- transfer between two of them twice (once out, once in), so the summary subtracts the entity's
-- internal figure, the transfers between two of its addresses.
--
-- pair_activity: USD volume and transfer count per (chain type, from, to), from != to, kept as
-- address_activity is (chain.transfers.v1, idempotent, reorgs take it back) and never pruned
-- (edges are, and hold no USD). It is what a relabel recomputes internal figures from.
--
-- goose runs this file as one READ COMMITTED transaction. Its first statements wait for, then
-- hold off until it commits, the writers whose changes the counting below must see whole:
-- writers of intel.addresses (imports, relabels, heuristics: ROW EXCLUSIVE, which SHARE ROW
-- EXCLUSIVE excludes, as CREATE TRIGGER would take it anyway; readers are not held) and transfer
-- batches (reorgLock shared) and reorgs (exclusive), by taking store.reorgLock exclusively. Each
-- statement below then sees every committed batch, reorg and relabel, and none commits until the
-- triggers exist. Replicas of the previous release take reorgLock without touching addresses and
-- write addresses without reorgLock, so the two waits cannot form a cycle with them.
LOCK TABLE intel.addresses IN SHARE ROW EXCLUSIVE MODE;
SELECT pg_advisory_xact_lock(7283400222);

-- Migrations run before a rolling upgrade, so replicas of the previous release keep consuming
-- beside this one for a while: their transfer batches and reorgs change address_activity and the
-- journal but not the pairs nor the internal figures, so a reorg by a new replica would take
-- back pairs they never added (negative internal figures), and one of theirs would leave pairs
-- of new replicas counted. These renames make those writes fail, rolled back and retried,
-- uncommitted, by replicas of this release (docs/intelligence.md, "Rolling upgrade to migration
-- 13"): every transfer batch of theirs first reads consumer_offsets' "offset", every reorg first
-- inserts into or deletes from orphaned_blocks by block_hash (and their batches' block states
-- name it too). Readers do not name either table.
ALTER TABLE intel.consumer_offsets RENAME COLUMN "offset" TO applied_offset;
ALTER TABLE intel.orphaned_blocks RENAME COLUMN block_hash TO hash;

CREATE TABLE intel.pair_activity (
    chain_type     text NOT NULL,
    from_addr      text NOT NULL,
    to_addr        text NOT NULL,
    volume_usd     double precision NOT NULL DEFAULT 0,
    transfer_count bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (chain_type, from_addr, to_addr)
);
CREATE INDEX pair_activity_to ON intel.pair_activity (chain_type, to_addr);

-- entity_internal: per operator entity, the sums of pair_activity over pairs whose two addresses
-- are attributed to it now. Transfer batches and reorgs add (take back) their pairs whose two
-- addresses share an entity; a change of an address's entity moves its pairs' sums between
-- entities (intel.apply_entity_moves), so the figure follows relabels exactly.
CREATE TABLE intel.entity_internal (
    entity_id      text PRIMARY KEY,
    volume_usd     double precision NOT NULL DEFAULT 0,
    transfer_count bigint NOT NULL DEFAULT 0
);

-- The pairs of the transfers the block journal holds (the two days a reorg may take back) are
-- counted here, so a reorg taking one back subtracts what was added; transfers consumed before
-- this migration and older than the journal stay counted per address only (Known limits).
INSERT INTO intel.pair_activity (chain_type, from_addr, to_addr, volume_usd, transfer_count)
SELECT b.chain_type, f.from_addr, f.to_addr, sum(f.usd), count(*)
FROM intel.block_facts b CROSS JOIN LATERAL unnest(b.from_addr, b.to_addr, b.usd) f(from_addr, to_addr, usd)
WHERE NOT b.orphaned AND f.from_addr <> f.to_addr
GROUP BY 1, 2, 3;
INSERT INTO intel.entity_internal (entity_id, volume_usd, transfer_count)
SELECT af.entity_id, sum(p.volume_usd), sum(p.transfer_count)
FROM intel.pair_activity p
JOIN intel.addresses af ON af.chain_type = p.chain_type AND af.address = p.from_addr
JOIN intel.addresses at ON at.chain_type = p.chain_type AND at.address = p.to_addr
WHERE af.entity_id = at.entity_id
GROUP BY 1;

-- Addresses whose entity the current statement changed, with the entity they had before it:
-- written by row triggers, emptied by the statement trigger that follows, so it holds no rows
-- outside a statement (and a transaction sees only its own).
CREATE UNLOGGED TABLE intel.entity_moves (
    chain_type text NOT NULL,
    address    text NOT NULL,
    old_entity text,
    PRIMARY KEY (chain_type, address)
);

-- apply_entity_moves moves the internal figures of the pairs touching the queued addresses from
-- the entities they counted for before the statement (a moved address's old entity, any other
-- address's entity, which the statement did not change) to those they count for now, then
-- empties the queue. It first takes exclusively the lock transfer batches take shared and reorgs
-- exclusively (store.reorgLock), so no batch that read the old attributions is still
-- uncommitted when the pairs are read (the statement's snapshot sees every pair counted with
-- them), and no batch reads the attributions before this transaction commits. Each pair is read
-- once, with the entities of its addresses before and after; the queue and the addresses are
-- looked up by primary key, so the cost is that of reading the moved addresses' pairs.
-- +goose StatementBegin
CREATE FUNCTION intel.apply_entity_moves() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM intel.entity_moves) THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(7283400222);
    WITH p AS (
        SELECT p.chain_type, p.from_addr, p.to_addr, p.volume_usd, p.transfer_count
        FROM intel.entity_moves m JOIN intel.pair_activity p ON p.chain_type = m.chain_type AND p.from_addr = m.address
        UNION
        SELECT p.chain_type, p.from_addr, p.to_addr, p.volume_usd, p.transfer_count
        FROM intel.entity_moves m JOIN intel.pair_activity p ON p.chain_type = m.chain_type AND p.to_addr = m.address
    ), e AS (
        SELECT p.volume_usd, p.transfer_count,
               CASE WHEN mf.address IS NULL THEN af.entity_id ELSE mf.old_entity END AS bf,
               CASE WHEN mt.address IS NULL THEN at.entity_id ELSE mt.old_entity END AS bt,
               af.entity_id AS nf, at.entity_id AS nt
        FROM p
        LEFT JOIN intel.entity_moves mf ON mf.chain_type = p.chain_type AND mf.address = p.from_addr
        LEFT JOIN intel.entity_moves mt ON mt.chain_type = p.chain_type AND mt.address = p.to_addr
        LEFT JOIN intel.addresses af ON af.chain_type = p.chain_type AND af.address = p.from_addr
        LEFT JOIN intel.addresses at ON at.chain_type = p.chain_type AND at.address = p.to_addr
    ), d AS (
        SELECT bf AS entity_id, -volume_usd AS usd, -transfer_count AS n FROM e
        WHERE bf = bt AND (nf IS DISTINCT FROM bf OR nt IS DISTINCT FROM bf)
        UNION ALL
        SELECT nf, volume_usd, transfer_count FROM e
        WHERE nf = nt AND (bf IS DISTINCT FROM nf OR bt IS DISTINCT FROM nf)
    )
    INSERT INTO intel.entity_internal AS i (entity_id, volume_usd, transfer_count)
    SELECT entity_id, sum(usd), sum(n) FROM d GROUP BY entity_id ORDER BY entity_id
    ON CONFLICT (entity_id) DO UPDATE SET volume_usd = i.volume_usd + excluded.volume_usd,
        transfer_count = i.transfer_count + excluded.transfer_count;
    DELETE FROM intel.entity_moves;
END
$$;
-- +goose StatementEnd

-- Inserts, updates and deletes queue the addresses whose entity they set or change (row-level
-- with a WHEN clause, like the tag marks of migration 9, so the many updates that move no address,
-- re-versioning, cost nothing); the statement trigger after them applies all of the statement's
-- moves at once (an upsert fires both the INSERT and the UPDATE statement triggers: the first
-- finds them all, since row triggers fire before statement triggers), seeing the entity every
-- address had before the statement and has after it, which row triggers alone cannot (they all
-- fire after the whole statement, so two moved addresses of one pair would each see the other's
-- new entity).
-- +goose StatementBegin
CREATE FUNCTION intel.addresses_queue_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO intel.entity_moves (chain_type, address, old_entity) VALUES (NEW.chain_type, NEW.address, NULL);
    ELSE
        INSERT INTO intel.entity_moves (chain_type, address, old_entity) VALUES (OLD.chain_type, OLD.address, OLD.entity_id);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION intel.addresses_apply_moves() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM intel.apply_entity_moves();
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER addresses_queue_move_insert AFTER INSERT ON intel.addresses FOR EACH ROW
    WHEN (NEW.entity_id IS NOT NULL) EXECUTE FUNCTION intel.addresses_queue_move();
CREATE TRIGGER addresses_queue_move_update AFTER UPDATE OF entity_id ON intel.addresses FOR EACH ROW
    WHEN (OLD.entity_id IS DISTINCT FROM NEW.entity_id) EXECUTE FUNCTION intel.addresses_queue_move();
CREATE TRIGGER addresses_queue_move_delete AFTER DELETE ON intel.addresses FOR EACH ROW
    WHEN (OLD.entity_id IS NOT NULL) EXECUTE FUNCTION intel.addresses_queue_move();
CREATE TRIGGER addresses_apply_moves AFTER INSERT OR UPDATE OR DELETE ON intel.addresses
    FOR EACH STATEMENT EXECUTE FUNCTION intel.addresses_apply_moves();

-- +goose Down
DROP TRIGGER addresses_apply_moves ON intel.addresses;
DROP TRIGGER addresses_queue_move_delete ON intel.addresses;
DROP TRIGGER addresses_queue_move_insert ON intel.addresses;
DROP TRIGGER addresses_queue_move_update ON intel.addresses;
DROP FUNCTION intel.addresses_apply_moves(), intel.addresses_queue_move(), intel.apply_entity_moves();
DROP TABLE intel.entity_moves, intel.entity_internal, intel.pair_activity;
ALTER TABLE intel.orphaned_blocks RENAME COLUMN hash TO block_hash;
ALTER TABLE intel.consumer_offsets RENAME COLUMN applied_offset TO "offset";
