-- +goose NO TRANSACTION
-- +goose Up
-- Outside a transaction so the index below is built CONCURRENTLY: a plain build holds a SHARE
-- lock on market.address_classes for the whole build, stopping the class changes and pool marks
-- of the previous release's replicas, which serve during the roll. Each statement is safe to run
-- again after a failure part way (IF EXISTS; a failed concurrent build leaves an invalid index,
-- dropped before the build).
--
-- market.flow_class, the class rule before deposit addresses (migration 00019), is named by no
-- statement of this release nor of the previous one (which classifies with market.address_class);
-- the statements that named it also named address_classes.entity_type, renamed by 00019, so
-- replicas that still carry them fail on that column with or without the function.
DROP FUNCTION IF EXISTS market.flow_class(text, boolean);

-- An address attributed to an entity counts as the entity's stored type (market.entity_types),
-- so a change of that type, whichever address's record carried it, classifies again every
-- address attributed to it, found by the attribution's entity id (internal/store/sql/classes_apply.sql).
-- An index on the stored attribution rather than a column: replicas of the previous release
-- keep it current, as they write info and know no such column.
DROP INDEX CONCURRENTLY IF EXISTS market.address_classes_entity;
CREATE INDEX CONCURRENTLY address_classes_entity ON market.address_classes ((info->'entity'->>'id'))
    WHERE info->'entity'->>'id' IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS market.address_classes_entity;
-- +goose StatementBegin
CREATE FUNCTION market.flow_class(entity_type text, is_pool boolean) RETURNS text
IMMUTABLE LANGUAGE sql AS $$
    SELECT CASE WHEN entity_type = 'cex' THEN 'cex' WHEN entity_type = 'dex' OR is_pool THEN 'dex' END
$$;
-- +goose StatementEnd
