-- +goose Up
-- removals counts the statements that deleted transfers (reorgs). With epoch (membership
-- changes) it tells a replica whether any count can have gone down since it read it: a count
-- only grows otherwise. Each replica remembers, per filter, a time up to which the count reached
-- its cap under the current epoch and removals (store.capCache), and answers a later window's
-- count from it. A statement trigger, not the reorg's code, bumps it: every delete counts,
-- whichever version of the service (or an operator) runs it. A constant default: no rewrite.
ALTER TABLE transfers.group_epoch ADD COLUMN removals bigint NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION transfers.count_removal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE transfers.group_epoch SET removals = removals + 1;
  RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER transfers_removed AFTER DELETE ON transfers.transfers
  FOR EACH STATEMENT EXECUTE FUNCTION transfers.count_removal();

-- +goose Down
DROP TRIGGER transfers_removed ON transfers.transfers;
DROP FUNCTION transfers.count_removal();
ALTER TABLE transfers.group_epoch DROP COLUMN removals;
