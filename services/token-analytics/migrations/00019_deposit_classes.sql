-- +goose Up
-- A deposit address (an address intelligence found paying out to one exchange's wallets) counts
-- as its exchange: its class comes from its attributed entity's type, else from the type of the
-- entity whose deposit address it is (internal/store/sql/classes_apply.sql).
--
-- entity_type is renamed so that replicas of the previous release, whose transfer batches and
-- class changes name it and classify without deposit services, fail during the roll and are
-- retried by new replicas (as 00009 did): no batch is classified by the previous rule once this
-- migration ran.
ALTER TABLE market.address_classes RENAME COLUMN entity_type TO attributed_type;
ALTER TABLE market.address_classes
    ADD COLUMN deposit_service text, -- the entity id whose deposit address this is
    ADD COLUMN deposit_type text;    -- that entity's type as this address was last classified by
UPDATE market.address_classes SET deposit_service = info->>'depositServiceID' WHERE info->>'depositServiceID' <> '';
CREATE INDEX address_classes_deposit_service ON market.address_classes (deposit_service) WHERE deposit_service IS NOT NULL;

-- The type of every entity the attributions named (as an address's entity or prediction), of the
-- highest entity version seen: what a deposit service id resolves to. Seeded from the stored
-- attributions; the deposit addresses are classified by it at the next start
-- (Store.ClassifyDepositAddresses).
CREATE TABLE market.entity_types (
    entity_id   text PRIMARY KEY,
    entity_type text NOT NULL,
    version     bigint NOT NULL DEFAULT 0
);
INSERT INTO market.entity_types (entity_id, entity_type)
SELECT DISTINCT ON (id) id, type FROM (
    SELECT info->'entity'->>'id' AS id, info->'entity'->>'type' AS type, 0 AS rank FROM market.address_classes
    UNION ALL
    SELECT info->'predictedEntity'->>'id', info->'predictedEntity'->>'type', 1 FROM market.address_classes
) e
WHERE id <> '' AND type IS NOT NULL
ORDER BY id, rank;

-- The class an address counts as in CEX/DEX flows: 'cex' or 'dex' by its attributed entity's
-- type (or 'dex' as a pool), else 'cex_deposit' when it is a deposit address of a CEX (its
-- receipts are CEX inflow, its payments the sweeps into its exchange), 'dex' for a DEX's.
-- +goose StatementBegin
CREATE FUNCTION market.address_class(attributed_type text, deposit_type text, is_pool boolean) RETURNS text
IMMUTABLE LANGUAGE sql AS $$
    SELECT CASE WHEN attributed_type = 'cex' THEN 'cex' WHEN attributed_type = 'dex' OR is_pool THEN 'dex'
                WHEN attributed_type IS NULL AND deposit_type = 'cex' THEN 'cex_deposit'
                WHEN attributed_type IS NULL AND deposit_type = 'dex' THEN 'dex' END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION market.address_class(text, text, boolean);
DROP TABLE market.entity_types;
DROP INDEX market.address_classes_deposit_service;
ALTER TABLE market.address_classes DROP COLUMN deposit_service, DROP COLUMN deposit_type;
ALTER TABLE market.address_classes RENAME COLUMN attributed_type TO entity_type;
