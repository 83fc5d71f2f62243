-- +goose Up
-- The attribution change log behind GET /intelligence/{entities,addresses,tags,address_tags}/updates:
-- one row per inserted, changed or deleted entity, address attribution, tag or address tag, in
-- commit-independent sequence order. Triggers write it, so every writer (imports, heuristics,
-- chain data, reorgs) is covered without each remembering to.
CREATE TABLE intel.change_log (
    seq    bigserial   PRIMARY KEY,
    kind   text        NOT NULL, -- entity, address, tag, address_tag
    key1   text        NOT NULL,
    key2   text        NOT NULL DEFAULT '',
    key3   text        NOT NULL DEFAULT '',
    key4   text        NOT NULL DEFAULT '',
    status text        NOT NULL, -- new, updated, deleted
    at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX change_log_kind_seq ON intel.change_log (kind, seq);
CREATE INDEX change_log_kind_at ON intel.change_log (kind, at);

-- +goose StatementBegin
CREATE FUNCTION intel.log_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r      record;
    status text;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; status := 'deleted';
    ELSIF TG_OP = 'INSERT' THEN r := NEW; status := 'new';
    ELSE r := NEW; status := 'updated';
    END IF;
    IF TG_TABLE_NAME = 'entities' THEN
        INSERT INTO intel.change_log (kind, key1, status) VALUES ('entity', r.id, status);
    ELSIF TG_TABLE_NAME = 'addresses' THEN
        INSERT INTO intel.change_log (kind, key1, key2, status) VALUES ('address', r.chain_type, r.address, status);
    ELSIF TG_TABLE_NAME = 'tags' THEN
        INSERT INTO intel.change_log (kind, key1, status) VALUES ('tag', r.id, status);
    ELSE
        INSERT INTO intel.change_log (kind, key1, key2, key3, key4, status)
        VALUES ('address_tag', r.chain_type, r.address, r.tag_id, r.params, status);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- An update logs only when the row's content changed (updated_at alone does not count).
CREATE TRIGGER entities_log AFTER INSERT OR DELETE ON intel.entities FOR EACH ROW EXECUTE FUNCTION intel.log_change();
CREATE TRIGGER entities_log_update AFTER UPDATE ON intel.entities FOR EACH ROW
    WHEN ((OLD.name, OLD.type, OLD.note, OLD.description, OLD.website, OLD.twitter, OLD.linkedin, OLD.service)
          IS DISTINCT FROM (NEW.name, NEW.type, NEW.note, NEW.description, NEW.website, NEW.twitter, NEW.linkedin, NEW.service))
    EXECUTE FUNCTION intel.log_change();
CREATE TRIGGER addresses_log AFTER INSERT OR DELETE ON intel.addresses FOR EACH ROW EXECUTE FUNCTION intel.log_change();
CREATE TRIGGER addresses_log_update AFTER UPDATE ON intel.addresses FOR EACH ROW
    WHEN ((OLD.entity_id, OLD.label, OLD.predicted_entity_id, OLD.deposit_service_id, OLD.is_contract, OLD.cluster_ids)
          IS DISTINCT FROM (NEW.entity_id, NEW.label, NEW.predicted_entity_id, NEW.deposit_service_id, NEW.is_contract, NEW.cluster_ids))
    EXECUTE FUNCTION intel.log_change();
CREATE TRIGGER tags_log AFTER INSERT OR DELETE ON intel.tags FOR EACH ROW EXECUTE FUNCTION intel.log_change();
CREATE TRIGGER tags_log_update AFTER UPDATE ON intel.tags FOR EACH ROW
    WHEN ((OLD.label, OLD.rank, OLD.disable_page, OLD.exclude_entities, OLD.chain)
          IS DISTINCT FROM (NEW.label, NEW.rank, NEW.disable_page, NEW.exclude_entities, NEW.chain))
    EXECUTE FUNCTION intel.log_change();
CREATE TRIGGER address_tags_log AFTER INSERT OR DELETE ON intel.address_tags FOR EACH ROW EXECUTE FUNCTION intel.log_change();

-- +goose Down
DROP TRIGGER address_tags_log ON intel.address_tags;
DROP TRIGGER tags_log_update ON intel.tags;
DROP TRIGGER tags_log ON intel.tags;
DROP TRIGGER addresses_log_update ON intel.addresses;
DROP TRIGGER addresses_log ON intel.addresses;
DROP TRIGGER entities_log_update ON intel.entities;
DROP TRIGGER entities_log ON intel.entities;
DROP FUNCTION intel.log_change();
DROP TABLE intel.change_log;
