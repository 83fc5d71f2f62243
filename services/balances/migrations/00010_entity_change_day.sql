-- +goose NO TRANSACTION
-- +goose Up
-- Outside a transaction so the index is built CONCURRENTLY: a plain build holds a SHARE lock on
-- entity_change for the whole build, stopping the applier, relabels and reorgs (of this release
-- and of the previous one, serving during the roll). A failed concurrent build leaves an invalid
-- index, dropped before the build, so the migration is safe to run again.
--
-- The ranking of /intelligence/entity_balance_changes (sql/read_entity_ranking.sql) counts every
-- operator entity's balances back from entity_current by the changes of the days after the
-- interval's start: one range of this index over the recent days instead of one descent of the
-- primary key per (entity, chain, token). The index holds the day alone, so an update of a day's
-- delta (the applier's most frequent write to this table) changes no indexed column and stays
-- eligible for a HOT update; a new day's row adds one entry.
DROP INDEX CONCURRENTLY IF EXISTS balances.entity_change_day;
CREATE INDEX CONCURRENTLY entity_change_day ON balances.entity_change (day);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS balances.entity_change_day;
