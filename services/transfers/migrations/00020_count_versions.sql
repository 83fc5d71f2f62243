-- +goose Up
-- removals counts the reorgs that removed transfers. With epoch (membership changes) it tells a
-- replica whether any count can have gone down since it read it: a count only grows otherwise.
-- Each replica remembers, per filter, a time up to which the count reached its cap under the
-- current epoch and removals (store.capCache), and answers a later window's count from it.
-- A constant default: no table rewrite.
ALTER TABLE transfers.group_epoch ADD COLUMN removals bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE transfers.group_epoch DROP COLUMN removals;
