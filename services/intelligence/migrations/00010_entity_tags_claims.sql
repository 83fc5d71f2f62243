-- +goose Up
-- The tags refresher recomputes an entity's tags without the version lock and takes the lock
-- only to store them (store.RefreshEntityTags, docs/intelligence.md "Entity tags"). So that a
-- change committed between its computation and its store is not lost, each mark records the
-- transaction that made it (marked_by): the refresher deletes a dirty row, and stores what it
-- computed, only when the row still carries the mark it claimed. A transaction id is never
-- reused, so a row deleted and marked again never carries a claimed mark. claimed_at leases the
-- row to the refresher that claimed it, so replicas split the work without holding row locks
-- while they compute; a new mark clears it (the claimer's result is stale).
ALTER TABLE intel.entity_tags_dirty
    ADD COLUMN marked_by xid8 NOT NULL DEFAULT pg_current_xact_id(),
    ADD COLUMN claimed_at timestamptz;

-- A mark updates a row another transaction marked (a new marked_by; the lease ends) and only
-- locks one its own transaction already marked (statements of one import mark an entity once).
-- It still takes the row's lock (ON CONFLICT DO UPDATE locks before its WHERE), so a mark made
-- while a refresher deletes the row waits for the refresher's commit and inserts it again.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION intel.mark_entity_tags(ids text[], republish boolean) RETURNS void LANGUAGE sql AS $$
    INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish)
    SELECT DISTINCT id, republish FROM unnest(ids) AS u(id) WHERE id IS NOT NULL ORDER BY 1
    ON CONFLICT (entity_id) DO UPDATE
    SET republish = d.republish OR excluded.republish, marked_by = pg_current_xact_id(), claimed_at = NULL
    WHERE d.marked_by <> pg_current_xact_id() OR (excluded.republish AND NOT d.republish)
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION intel.addresses_mark_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.entity_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM intel.address_tags at JOIN intel.tags t ON t.id = at.tag_id
        WHERE at.chain_type = NEW.chain_type AND at.address = NEW.address AND NOT t.exclude_entities) THEN
        INSERT INTO intel.entity_tags_dirty AS d (entity_id) VALUES (NEW.entity_id)
        ON CONFLICT (entity_id) DO UPDATE SET marked_by = pg_current_xact_id(), claimed_at = NULL
        WHERE d.marked_by <> pg_current_xact_id();
    END IF;
    IF OLD.entity_id IS NOT NULL THEN
        INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish) VALUES (OLD.entity_id, true)
        ON CONFLICT (entity_id) DO UPDATE SET republish = true, marked_by = pg_current_xact_id(), claimed_at = NULL
        WHERE d.marked_by <> pg_current_xact_id() OR NOT d.republish;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION intel.mark_entity_tags(ids text[], republish boolean) RETURNS void LANGUAGE sql AS $$
    INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish)
    SELECT DISTINCT id, republish FROM unnest(ids) AS u(id) WHERE id IS NOT NULL ORDER BY 1
    ON CONFLICT (entity_id) DO UPDATE SET republish = true
    WHERE excluded.republish AND NOT d.republish
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION intel.addresses_mark_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.entity_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM intel.address_tags at JOIN intel.tags t ON t.id = at.tag_id
        WHERE at.chain_type = NEW.chain_type AND at.address = NEW.address AND NOT t.exclude_entities) THEN
        INSERT INTO intel.entity_tags_dirty (entity_id) VALUES (NEW.entity_id)
        ON CONFLICT (entity_id) DO UPDATE SET republish = true WHERE false;
    END IF;
    IF OLD.entity_id IS NOT NULL THEN
        INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish) VALUES (OLD.entity_id, true)
        ON CONFLICT (entity_id) DO UPDATE SET republish = true WHERE NOT d.republish;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
ALTER TABLE intel.entity_tags_dirty DROP COLUMN claimed_at, DROP COLUMN marked_by;
