-- +goose Up
-- The natural key's uid of an entity pair row's transfer while the row holds exactly one (its
-- time is then t_first): a keyset page turn reads such a row's transfer through the natural
-- key's index (block_time, uid), whose entries for the page's span lie on a few leaf pages,
-- instead of probing the sender's or recipient's index, one leaf page per pair row
-- (store.edgeNewestPage). The apply writes it for a row it creates from one transfer. Any change
-- of the row's count (a second transfer, a subtraction) makes it NULL, by the trigger below, so
-- the rule holds whatever writes the row: a replica of an earlier version, which knows nothing
-- of the column, during a rolling upgrade. The trigger fires only for rows holding a uid. Rows
-- written before and rows a relabel adds have none: those are read through the addresses'
-- indexes. Added without a default: no rewrite.
ALTER TABLE transfers.grp_edges ADD COLUMN uid uuid;

-- +goose StatementBegin
CREATE FUNCTION transfers.grp_edges_drop_uid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.uid := NULL;
  RETURN NEW;
END $$;
-- +goose StatementEnd

CREATE TRIGGER grp_edges_drop_uid BEFORE UPDATE ON transfers.grp_edges
  FOR EACH ROW WHEN (OLD.uid IS NOT NULL AND NEW.n IS DISTINCT FROM OLD.n)
  EXECUTE FUNCTION transfers.grp_edges_drop_uid();

-- +goose Down
DROP TRIGGER grp_edges_drop_uid ON transfers.grp_edges;
DROP FUNCTION transfers.grp_edges_drop_uid();
ALTER TABLE transfers.grp_edges DROP COLUMN uid;
