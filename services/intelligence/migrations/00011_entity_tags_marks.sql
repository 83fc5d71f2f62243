-- +goose Up
-- Mark tokens and retry backoff for the entity tags refresher (store.RefreshEntityTags,
-- docs/intelligence.md "Entity tags").
--
-- mark: what a refresher claims and later compares, instead of marked_by. marked_by is a
-- transaction id, and transaction ids start again low in a cluster restored from a dump, so a
-- restored row could carry the id of a later transaction; a value of a sequence is never handed
-- out twice (a dump restores the sequence with the rows). Every mark of another transaction
-- takes a new value and ends the lease. Whether this transaction already marked the row (later
-- marks only lock it) is read from the row's xmin, which a restore rewrites too.
-- marked_by is still kept up to date for refreshers of the previous release during an upgrade.
--
-- failures, retry_at: an entity whose recomputation failed is left to a later round, after a
-- backoff growing with its consecutive failures, so the other entities of its rounds go on.
-- A new mark keeps the backoff (the entity is recomputed with its newest state when it ends);
-- a successful store deletes the row.
CREATE SEQUENCE intel.entity_tags_mark;
ALTER TABLE intel.entity_tags_dirty
    ADD COLUMN mark bigint NOT NULL DEFAULT nextval('intel.entity_tags_mark'),
    ADD COLUMN failures integer NOT NULL DEFAULT 0,
    ADD COLUMN retry_at timestamptz;
ALTER SEQUENCE intel.entity_tags_mark OWNED BY intel.entity_tags_dirty.mark;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION intel.mark_entity_tags(ids text[], republish boolean) RETURNS void LANGUAGE sql AS $$
    INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish)
    SELECT DISTINCT id, republish FROM unnest(ids) AS u(id) WHERE id IS NOT NULL ORDER BY 1
    ON CONFLICT (entity_id) DO UPDATE
    SET republish = d.republish OR excluded.republish, mark = nextval('intel.entity_tags_mark'),
        marked_by = pg_current_xact_id(), claimed_at = NULL
    WHERE d.xmin <> pg_current_xact_id()::xid OR (excluded.republish AND NOT d.republish)
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION intel.addresses_mark_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.entity_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM intel.address_tags at JOIN intel.tags t ON t.id = at.tag_id
        WHERE at.chain_type = NEW.chain_type AND at.address = NEW.address AND NOT t.exclude_entities) THEN
        INSERT INTO intel.entity_tags_dirty AS d (entity_id) VALUES (NEW.entity_id)
        ON CONFLICT (entity_id) DO UPDATE
        SET mark = nextval('intel.entity_tags_mark'), marked_by = pg_current_xact_id(), claimed_at = NULL
        WHERE d.xmin <> pg_current_xact_id()::xid;
    END IF;
    IF OLD.entity_id IS NOT NULL THEN
        INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish) VALUES (OLD.entity_id, true)
        ON CONFLICT (entity_id) DO UPDATE
        SET republish = true, mark = nextval('intel.entity_tags_mark'), marked_by = pg_current_xact_id(), claimed_at = NULL
        WHERE d.xmin <> pg_current_xact_id()::xid OR NOT d.republish;
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
ALTER TABLE intel.entity_tags_dirty DROP COLUMN retry_at, DROP COLUMN failures, DROP COLUMN mark;
DROP SEQUENCE IF EXISTS intel.entity_tags_mark;
