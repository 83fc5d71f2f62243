-- +goose Up
-- The version of the entity details stored (intel.attributions.v1's Entity.version): events of
-- different addresses of one entity arrive in any order (other partitions, replays of the
-- compacted topic), and only details of a version at least the stored one replace them
-- (sql/entity_upsert.sql).
--
-- Rolling upgrade: existing rows start at 0, and events from publishers that predate the field
-- carry 0, so until a versioned event arrives for an entity its details are replaced by every
-- event as before; from then on only by versioned ones at least as new. Pods of the previous
-- release do not write the column; a row they update keeps its version, so a versioned event
-- older than what they wrote can still replace it until the next change of the entity (the
-- window of the upgrade).
ALTER TABLE balances.entities ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE balances.entities DROP COLUMN version;
