-- +goose Up
-- Chain data: transactions, transfers and swaps, partitioned by month of block time. Partitions
-- are created on demand by the writer (transfers.ensure_partition). Addresses are stored
-- normalised (EVM lower-case); entity fields are never stored here: they come from the
-- attribution read model when serving.

CREATE TABLE transfers.transactions (
    chain               text        NOT NULL,
    hash                text        NOT NULL,
    block_hash          text        NOT NULL,
    block_number        bigint      NOT NULL,
    block_time          timestamptz NOT NULL,
    tx_index            integer     NOT NULL,
    from_addr           text        NOT NULL,
    to_addr             text        NOT NULL, -- '' for a contract creation
    contract_created    text        NOT NULL,
    nonce               bigint      NOT NULL,
    success             boolean     NOT NULL,
    value               numeric(78,0) NOT NULL,
    value_usd           double precision,
    gas_used            bigint      NOT NULL,
    gas_price           numeric(78,0) NOT NULL,
    effective_gas_price numeric(78,0) NOT NULL,
    fee                 numeric(78,0) NOT NULL,
    fee_usd             double precision,
    method_id           text        NOT NULL,
    UNIQUE (hash, chain, block_hash, block_time)
) PARTITION BY RANGE (block_time);

CREATE TABLE transfers.transfers (
    chain            text        NOT NULL,
    id               text        NOT NULL,
    tx_hash          text        NOT NULL,
    block_hash       text        NOT NULL,
    block_number     bigint      NOT NULL,
    block_time       timestamptz NOT NULL,
    tx_index         integer     NOT NULL,
    log_index        integer     NOT NULL,
    from_addr        text        NOT NULL,
    to_addr          text        NOT NULL,
    token            text        NOT NULL, -- contract address; '' for the native coin
    token_id         text        NOT NULL, -- pricing id; '' when unknown
    token_name       text        NOT NULL,
    token_symbol     text        NOT NULL,
    token_decimals   integer     NOT NULL,
    amount           numeric(78,0) NOT NULL,   -- exact, smallest unit
    unit_value       double precision NOT NULL, -- amount / 10^decimals, for ranking and ranges
    usd              double precision,          -- NULL when no price was known
    type             smallint    NOT NULL,      -- 1 external, 2 internal, 3 token
    from_is_contract boolean     NOT NULL,
    to_is_contract   boolean     NOT NULL,
    -- Natural id per block: a redelivery conflicts; the same transfer re-mined in another block
    -- after a reorg is a different row until the reorg removes the orphaned one. tx_hash leads
    -- so that /tx/{hash} uses this index too.
    UNIQUE (tx_hash, chain, id, block_hash, block_time)
) PARTITION BY RANGE (block_time);

-- Keyset-friendly: one index per sort key per direction, plus global ones for queries without
-- an address. usd is NULLS FIRST so that both directions treat an unknown price as the lowest.
CREATE INDEX transfers_from_time  ON transfers.transfers (from_addr, block_time);
CREATE INDEX transfers_to_time    ON transfers.transfers (to_addr, block_time);
CREATE INDEX transfers_from_usd   ON transfers.transfers (from_addr, usd NULLS FIRST);
CREATE INDEX transfers_to_usd     ON transfers.transfers (to_addr, usd NULLS FIRST);
CREATE INDEX transfers_from_value ON transfers.transfers (from_addr, unit_value);
CREATE INDEX transfers_to_value   ON transfers.transfers (to_addr, unit_value);
CREATE INDEX transfers_time       ON transfers.transfers (block_time);
CREATE INDEX transfers_usd        ON transfers.transfers (usd NULLS FIRST);
CREATE INDEX transfers_value      ON transfers.transfers (unit_value);

CREATE TABLE transfers.swaps (
    chain            text        NOT NULL,
    id               text        NOT NULL,
    tx_hash          text        NOT NULL,
    block_hash       text        NOT NULL,
    block_number     bigint      NOT NULL,
    block_time       timestamptz NOT NULL,
    log_index        integer     NOT NULL,
    contract_addr    text        NOT NULL,
    sender           text        NOT NULL,
    receiver         text        NOT NULL,
    token0           text        NOT NULL,
    token0_id        text        NOT NULL,
    token0_name      text        NOT NULL,
    token0_symbol    text        NOT NULL,
    token0_decimals  integer     NOT NULL,
    amount0          numeric(78,0) NOT NULL, -- signed
    token1           text        NOT NULL,
    token1_id        text        NOT NULL,
    token1_name      text        NOT NULL,
    token1_symbol    text        NOT NULL,
    token1_decimals  integer     NOT NULL,
    amount1          numeric(78,0) NOT NULL,
    usd              double precision,
    valid            boolean     NOT NULL,
    protocol         text        NOT NULL,
    UNIQUE (tx_hash, chain, id, block_hash, block_time)
) PARTITION BY RANGE (block_time);

CREATE INDEX swaps_sender_time   ON transfers.swaps (sender, block_time);
CREATE INDEX swaps_receiver_time ON transfers.swaps (receiver, block_time);
CREATE INDEX swaps_sender_usd    ON transfers.swaps (sender, usd NULLS FIRST);
CREATE INDEX swaps_receiver_usd  ON transfers.swaps (receiver, usd NULLS FIRST);
CREATE INDEX swaps_time          ON transfers.swaps (block_time);
CREATE INDEX swaps_usd           ON transfers.swaps (usd NULLS FIRST);

-- Blocks seen in written rows: a reorg names orphaned block hashes, this gives their time so
-- the delete prunes to one partition and uses the time index.
CREATE TABLE transfers.blocks (
    chain        text        NOT NULL,
    block_hash   text        NOT NULL,
    block_number bigint      NOT NULL,
    block_time   timestamptz NOT NULL,
    PRIMARY KEY (chain, block_hash)
);

-- Orphaned blocks: rows of these blocks that arrive after the reorg (topics are not ordered
-- with each other) are dropped on write.
CREATE TABLE transfers.orphaned_blocks (
    chain       text        NOT NULL,
    block_hash  text        NOT NULL,
    orphaned_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, block_hash)
);

-- Rollups, maintained in the same transaction as the rows they count, only from rows actually
-- inserted (or deleted by a reorg). Keyed by address, never by entity: entity figures are summed
-- over the entity's addresses at query time through the attribution read model, so a relabel
-- changes them without rewriting anything. Sums are numeric so that a reorg's subtraction
-- brings them back exactly.
CREATE TABLE transfers.addr_hourly (
    address   text        NOT NULL,
    bucket    timestamptz NOT NULL,
    chain     text        NOT NULL,
    token     text        NOT NULL,
    token_id  text        NOT NULL,
    in_n      bigint      NOT NULL,
    in_usd    numeric     NOT NULL,
    in_value  numeric     NOT NULL,
    out_n     bigint      NOT NULL,
    out_usd   numeric     NOT NULL,
    out_value numeric     NOT NULL,
    PRIMARY KEY (address, bucket, chain, token)
);

CREATE TABLE transfers.addr_daily (LIKE transfers.addr_hourly INCLUDING ALL);

-- Transfers per (sender, recipient) pair and hour: counterparties, entity-internal transfers
-- (subtracted from an entity's in/out flow) and histograms filtered by from/to.
CREATE TABLE transfers.pair_hourly (
    from_addr text        NOT NULL,
    to_addr   text        NOT NULL,
    bucket    timestamptz NOT NULL,
    chain     text        NOT NULL,
    token     text        NOT NULL,
    token_id  text        NOT NULL,
    n         bigint      NOT NULL,
    usd       numeric     NOT NULL,
    value     numeric     NOT NULL,
    PRIMARY KEY (from_addr, to_addr, bucket, chain, token)
);
CREATE INDEX pair_hourly_to ON transfers.pair_hourly (to_addr, from_addr, bucket);

-- Every transfer per chain, token and hour: histograms without an address filter.
CREATE TABLE transfers.chain_hourly (
    bucket   timestamptz NOT NULL,
    chain    text        NOT NULL,
    token    text        NOT NULL,
    token_id text        NOT NULL,
    n        bigint      NOT NULL,
    usd      numeric     NOT NULL,
    PRIMARY KEY (bucket, chain, token)
);

-- Attribution read model: the newest version of intel.attributions.v1 per address.
CREATE TABLE transfers.attributions (
    chain_type         text    NOT NULL,
    address            text    NOT NULL,
    entity_id          text    NOT NULL, -- '' when not attributed
    entity_type        text    NOT NULL,
    entity             jsonb,            -- the Entity as published, for rendering
    label              text    NOT NULL,
    predicted_id       text    NOT NULL,
    predicted          jsonb,
    deposit_service_id text    NOT NULL,
    is_contract        boolean NOT NULL,
    version            bigint  NOT NULL,
    updated_at         timestamptz NOT NULL,
    PRIMARY KEY (chain_type, address)
);
CREATE INDEX attributions_entity  ON transfers.attributions (entity_id, address) WHERE entity_id <> '';
CREATE INDEX attributions_type    ON transfers.attributions (entity_type, address) WHERE entity_type <> '';
CREATE INDEX attributions_deposit ON transfers.attributions (deposit_service_id, address) WHERE deposit_service_id <> '';

-- ensure_partition creates the monthly partition of a table that holds t, if missing.
-- +goose StatementBegin
CREATE FUNCTION transfers.ensure_partition(tbl text, t timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    lo timestamptz := date_trunc('month', t, 'UTC');
    hi timestamptz := lo + interval '1 month';
    name text := tbl || '_' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMM');
BEGIN
    IF to_regclass('transfers.' || name) IS NOT NULL THEN
        RETURN;
    END IF;
    -- Serialise creators: two writers may see the same new month at once.
    PERFORM pg_advisory_xact_lock(hashtext('transfers.partition.' || name));
    IF to_regclass('transfers.' || name) IS NOT NULL THEN
        RETURN;
    END IF;
    EXECUTE format('CREATE TABLE transfers.%I PARTITION OF transfers.%I FOR VALUES FROM (%L) TO (%L)',
                   name, tbl, lo, hi);
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION transfers.ensure_partition(text, timestamptz);
DROP TABLE transfers.attributions, transfers.chain_hourly, transfers.pair_hourly,
    transfers.addr_daily, transfers.addr_hourly, transfers.orphaned_blocks, transfers.blocks,
    transfers.swaps, transfers.transfers, transfers.transactions;
