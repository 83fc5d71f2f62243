-- +goose Up
-- Each operator entity's populated tags (the tags of its addresses that propagate to entities,
-- as /intelligence/entity computes them), kept so the attribution publisher reads them with the
-- entity instead of scanning the entity's addresses for every event. They are recomputed by
-- store.RefreshEntityTags for the entities listed in intel.entity_tags_dirty only; triggers list
-- an entity there in the same transaction as any change that can alter its tags, whatever wrote
-- it (docs/intelligence.md, "Entity tags").
ALTER TABLE intel.entities ADD COLUMN populated_tags jsonb NOT NULL DEFAULT '[]';

-- Entities whose populated tags must be recomputed. republish: an address left the entity, so
-- the address whose event last carried the entity's newest details may no longer carry them
-- (the compacted topic keeps only its newest event); one address of the entity is re-versioned
-- even when the tags did not change.
CREATE TABLE intel.entity_tags_dirty (
    entity_id text PRIMARY KEY,
    republish boolean NOT NULL DEFAULT false
);

-- Marking takes the row's lock even when the row exists (ON CONFLICT DO UPDATE locks before its
-- WHERE), so a mark made while the refresher holds the row waits until the refresher deleted it
-- and then inserts it again: a change is never lost between the refresher's read and its delete.
-- +goose StatementBegin
CREATE FUNCTION intel.mark_entity_tags(ids text[], republish boolean) RETURNS void LANGUAGE sql AS $$
    INSERT INTO intel.entity_tags_dirty AS d (entity_id, republish)
    SELECT DISTINCT id, republish FROM unnest(ids) AS u(id) WHERE id IS NOT NULL ORDER BY 1
    ON CONFLICT (entity_id) DO UPDATE SET republish = true
    WHERE excluded.republish AND NOT d.republish
$$;
-- +goose StatementEnd

-- address_tags: statement-level, so a batch marks each entity once; the transition tables hold
-- only the tag rows the statement changed, joined to their addresses by primary key.
-- +goose StatementBegin
CREATE FUNCTION intel.address_tags_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM intel.mark_entity_tags(ARRAY(
            SELECT a.entity_id FROM new_rows n
            JOIN intel.tags t ON t.id = n.tag_id AND NOT t.exclude_entities
            JOIN intel.addresses a ON a.chain_type = n.chain_type AND a.address = n.address
            WHERE a.entity_id IS NOT NULL), false);
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM intel.mark_entity_tags(ARRAY(
            SELECT a.entity_id FROM old_rows o
            JOIN intel.tags t ON t.id = o.tag_id AND NOT t.exclude_entities
            JOIN intel.addresses a ON a.chain_type = o.chain_type AND a.address = o.address
            WHERE a.entity_id IS NOT NULL), false);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER address_tags_mark_insert AFTER INSERT ON intel.address_tags
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION intel.address_tags_mark();
CREATE TRIGGER address_tags_mark_update AFTER UPDATE ON intel.address_tags
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION intel.address_tags_mark();
CREATE TRIGGER address_tags_mark_delete AFTER DELETE ON intel.address_tags
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION intel.address_tags_mark();

-- addresses: an address joining an entity changes its tags only when it has tags; one leaving it
-- marks it for republication. Inserts are statement-level (an import inserts thousands of rows
-- at a time; one set-based look-up of their tags). Updates and deletes are row-level with a WHEN
-- clause, so the many updates that move no address between entities (re-versioning for the
-- publisher, heuristics' predictions) cost nothing; a statement-level update trigger would copy
-- every updated row into transition tables.
-- +goose StatementBegin
CREATE FUNCTION intel.addresses_mark_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM intel.mark_entity_tags(ARRAY(
        SELECT n.entity_id FROM new_rows n
        WHERE n.entity_id IS NOT NULL AND EXISTS (
            SELECT 1 FROM intel.address_tags at JOIN intel.tags t ON t.id = at.tag_id
            WHERE at.chain_type = n.chain_type AND at.address = n.address AND NOT t.exclude_entities)), false);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION intel.addresses_mark_move() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER addresses_mark_insert AFTER INSERT ON intel.addresses
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION intel.addresses_mark_insert();
CREATE TRIGGER addresses_mark_update AFTER UPDATE OF entity_id ON intel.addresses FOR EACH ROW
    WHEN (OLD.entity_id IS DISTINCT FROM NEW.entity_id) EXECUTE FUNCTION intel.addresses_mark_move();
CREATE TRIGGER addresses_mark_delete AFTER DELETE ON intel.addresses FOR EACH ROW
    WHEN (OLD.entity_id IS NOT NULL) EXECUTE FUNCTION intel.addresses_mark_move();

-- tags: a changed definition (label, rank, flags) changes the populated tags of every entity
-- with an address carrying it. Imports upsert every tag of a batch, so only a real change counts.
-- +goose StatementBegin
CREATE FUNCTION intel.tags_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM intel.mark_entity_tags(ARRAY(
        SELECT DISTINCT a.entity_id FROM intel.address_tags at
        JOIN intel.addresses a ON a.chain_type = at.chain_type AND a.address = at.address
        WHERE at.tag_id = NEW.id AND a.entity_id IS NOT NULL), false);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER tags_mark AFTER UPDATE ON intel.tags FOR EACH ROW
    WHEN ((OLD.label, OLD.rank, OLD.disable_page, OLD.exclude_entities, OLD.chain)
          IS DISTINCT FROM (NEW.label, NEW.rank, NEW.disable_page, NEW.exclude_entities, NEW.chain))
    EXECUTE FUNCTION intel.tags_mark();

-- Entities that already have tagged addresses get theirs at the refresher's first rounds (and
-- are published then, with one re-versioned address each).
INSERT INTO intel.entity_tags_dirty (entity_id)
SELECT DISTINCT a.entity_id FROM intel.addresses a
WHERE a.entity_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM intel.address_tags at JOIN intel.tags t ON t.id = at.tag_id
    WHERE at.chain_type = a.chain_type AND at.address = a.address AND NOT t.exclude_entities);

-- +goose Down
DROP TRIGGER tags_mark ON intel.tags;
DROP TRIGGER addresses_mark_delete ON intel.addresses;
DROP TRIGGER addresses_mark_update ON intel.addresses;
DROP TRIGGER addresses_mark_insert ON intel.addresses;
DROP TRIGGER address_tags_mark_delete ON intel.address_tags;
DROP TRIGGER address_tags_mark_update ON intel.address_tags;
DROP TRIGGER address_tags_mark_insert ON intel.address_tags;
DROP FUNCTION intel.tags_mark(), intel.addresses_mark_move(), intel.addresses_mark_insert(), intel.address_tags_mark(),
    intel.mark_entity_tags(text[], boolean);
DROP TABLE intel.entity_tags_dirty;
ALTER TABLE intel.entities DROP COLUMN populated_tags;
