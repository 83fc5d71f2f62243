-- +goose Up
-- Cheaper writes and entity-level rollups (docs/transfers.md).
--
-- * Key text columns use the "C" collation: the same order as the database's C.UTF-8 for these
--   ASCII identifiers, but compared with memcmp instead of strcoll (several times faster in
--   every index and sort).
-- * transfers: the natural key is a 128-bit hash (uid) of (tx_hash, chain, id, block_hash),
--   unique with block_time, so the dedupe index is narrow and appended to in time order (it also
--   serves time-ordered scans). Two address indexes (sender, recipient by time) carry the other
--   address, usd, unit_value and uid, so per-address sorts by usd or value are index-only; the
--   per-address usd/value indexes and the global value index are gone.
-- * blocks are keyed by (chain, number, hash): appended in order rather than at random.
-- * addr_hourly is gone: hourly per-address figures are sums of pair_hourly (hourly histograms
--   cover at most 30 days); addr_daily stays for daily figures. Both are partitioned by month.
-- * Attribution groups: "e:<entity>" (entity or deposit service), "d:<entity>" (deposit
--   addresses), "t:<type>". A group with more than a threshold of addresses is live: its rollups
--   are maintained on write from the read model and re-aggregated on relabel (grp_*).

-- The natural id of a transfer, as the writer computes it (store.TransferUID).
CREATE FUNCTION transfers.transfer_uid(tx_hash text, chain text, id text, block_hash text) RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN encode(substr(sha256(convert_to(
    octet_length(tx_hash) || ':' || tx_hash || '|' || octet_length(chain) || ':' || chain || '|' ||
    octet_length(id) || ':' || id || '|' || octet_length(block_hash) || ':' || block_hash, 'UTF8')), 1, 16), 'hex')::uuid;

ALTER TABLE transfers.transfers DROP CONSTRAINT transfers_tx_hash_chain_id_block_hash_block_time_key;
DROP INDEX transfers.transfers_from_time, transfers.transfers_to_time, transfers.transfers_from_usd,
    transfers.transfers_to_usd, transfers.transfers_from_value, transfers.transfers_to_value,
    transfers.transfers_time, transfers.transfers_usd, transfers.transfers_value;
ALTER TABLE transfers.transfers
    ALTER COLUMN chain TYPE text COLLATE "C", ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN tx_hash TYPE text COLLATE "C", ALTER COLUMN block_hash TYPE text COLLATE "C",
    ALTER COLUMN from_addr TYPE text COLLATE "C", ALTER COLUMN to_addr TYPE text COLLATE "C",
    ALTER COLUMN token TYPE text COLLATE "C", ALTER COLUMN token_id TYPE text COLLATE "C",
    ADD COLUMN uid uuid;
UPDATE transfers.transfers SET uid = transfers.transfer_uid(tx_hash, chain, id, block_hash);
ALTER TABLE transfers.transfers ALTER COLUMN uid SET NOT NULL,
    ADD CONSTRAINT transfers_natural_key UNIQUE (block_time, uid);
CREATE INDEX transfers_from ON transfers.transfers (from_addr, block_time) INCLUDE (to_addr, usd, unit_value, uid);
CREATE INDEX transfers_to ON transfers.transfers (to_addr, block_time) INCLUDE (from_addr, usd, unit_value, uid);
CREATE INDEX transfers_usd ON transfers.transfers (usd NULLS FIRST);

ALTER TABLE transfers.blocks DROP CONSTRAINT blocks_pkey;
ALTER TABLE transfers.blocks ALTER COLUMN chain TYPE text COLLATE "C", ALTER COLUMN block_hash TYPE text COLLATE "C",
    ADD PRIMARY KEY (chain, block_number, block_hash);
ALTER TABLE transfers.orphaned_blocks ALTER COLUMN chain TYPE text COLLATE "C", ALTER COLUMN block_hash TYPE text COLLATE "C";

DROP TABLE transfers.addr_hourly;
-- addr_daily and pair_hourly get one row per side (per transfer) for sparse addresses: they are
-- partitioned by month like the chain tables, so writes touch the current month's indexes.
ALTER TABLE transfers.addr_daily RENAME TO addr_daily_v2;
ALTER INDEX transfers.addr_daily_pkey RENAME TO addr_daily_v2_pkey;
CREATE TABLE transfers.addr_daily (
    address   text COLLATE "C" NOT NULL,
    bucket    timestamptz NOT NULL,
    chain     text COLLATE "C" NOT NULL,
    token     text COLLATE "C" NOT NULL,
    token_id  text COLLATE "C" NOT NULL,
    in_n      bigint  NOT NULL,
    in_usd    numeric NOT NULL,
    in_value  numeric NOT NULL,
    out_n     bigint  NOT NULL,
    out_usd   numeric NOT NULL,
    out_value numeric NOT NULL,
    PRIMARY KEY (address, bucket, chain, token)
) PARTITION BY RANGE (bucket);

ALTER TABLE transfers.pair_hourly RENAME TO pair_hourly_v2;
ALTER INDEX transfers.pair_hourly_pkey RENAME TO pair_hourly_v2_pkey;
DROP INDEX transfers.pair_hourly_to;
CREATE TABLE transfers.pair_hourly (
    from_addr text COLLATE "C" NOT NULL,
    to_addr   text COLLATE "C" NOT NULL,
    bucket    timestamptz NOT NULL,
    chain     text COLLATE "C" NOT NULL,
    token     text COLLATE "C" NOT NULL,
    token_id  text COLLATE "C" NOT NULL,
    n         bigint  NOT NULL,
    usd       numeric NOT NULL,
    value     numeric NOT NULL,
    PRIMARY KEY (from_addr, to_addr, bucket, chain, token)
) PARTITION BY RANGE (bucket);
CREATE INDEX pair_hourly_to ON transfers.pair_hourly (to_addr, bucket);

-- +goose StatementBegin
DO $$
DECLARE m timestamptz;
BEGIN
    FOR m IN SELECT DISTINCT date_trunc('month', bucket, 'UTC') FROM transfers.addr_daily_v2
             UNION SELECT DISTINCT date_trunc('month', bucket, 'UTC') FROM transfers.pair_hourly_v2 LOOP
        PERFORM transfers.ensure_partition('addr_daily', m);
        PERFORM transfers.ensure_partition('pair_hourly', m);
    END LOOP;
END $$;
-- +goose StatementEnd
INSERT INTO transfers.addr_daily SELECT * FROM transfers.addr_daily_v2;
INSERT INTO transfers.pair_hourly SELECT * FROM transfers.pair_hourly_v2;
DROP TABLE transfers.addr_daily_v2, transfers.pair_hourly_v2;

ALTER TABLE transfers.chain_hourly ALTER COLUMN chain TYPE text COLLATE "C",
    ALTER COLUMN token TYPE text COLLATE "C", ALTER COLUMN token_id TYPE text COLLATE "C";
ALTER TABLE transfers.chain_hourly SET (fillfactor = 70);
CREATE TABLE transfers.chain_daily (LIKE transfers.chain_hourly INCLUDING ALL) WITH (fillfactor = 70);
INSERT INTO transfers.chain_daily (bucket, chain, token, token_id, n, usd)
SELECT date_trunc('day', bucket, 'UTC'), chain, token, min(token_id), sum(n), sum(usd) FROM transfers.chain_hourly GROUP BY 1, 2, 3;

DROP INDEX transfers.attributions_entity, transfers.attributions_type, transfers.attributions_deposit;
ALTER TABLE transfers.attributions
    ALTER COLUMN address TYPE text COLLATE "C", ALTER COLUMN entity_id TYPE text COLLATE "C",
    ALTER COLUMN entity_type TYPE text COLLATE "C", ALTER COLUMN deposit_service_id TYPE text COLLATE "C";
CREATE INDEX attributions_entity  ON transfers.attributions (entity_id, address) WHERE entity_id <> '';
CREATE INDEX attributions_type    ON transfers.attributions (entity_type, address) WHERE entity_type <> '';
CREATE INDEX attributions_deposit ON transfers.attributions (deposit_service_id, address) WHERE deposit_service_id <> '';
-- One probe answers "which groups is this address in".
CREATE INDEX attributions_address ON transfers.attributions (address) INCLUDE (entity_id, entity_type, deposit_service_id);

-- The groups of an attribution: 'e:' entity (as entity or deposit service), 'd:' deposit
-- service, 't:' entity type.
CREATE FUNCTION transfers.attribution_groups(entity_id text, entity_type text, deposit_service_id text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN array_remove(ARRAY[
    CASE WHEN entity_id <> '' THEN 'e:' || entity_id END,
    CASE WHEN deposit_service_id <> '' AND deposit_service_id IS DISTINCT FROM entity_id THEN 'e:' || deposit_service_id END,
    CASE WHEN deposit_service_id <> '' THEN 'd:' || deposit_service_id END,
    CASE WHEN entity_type <> '' THEN 't:' || entity_type END], NULL);

-- Every group with its size (distinct addresses); live groups have rollups.
CREATE TABLE transfers.groups (
    grp  text COLLATE "C" PRIMARY KEY,
    size integer NOT NULL,
    live boolean NOT NULL DEFAULT false
);
INSERT INTO transfers.groups (grp, size)
SELECT g, count(DISTINCT address) FROM transfers.attributions,
    unnest(transfers.attribution_groups(entity_id, entity_type, deposit_service_id)) g
GROUP BY g;

-- Bumped whenever the live groups or their members change: writers cache the groups of the
-- addresses they see and drop the cache when it moves.
CREATE TABLE transfers.group_epoch (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    epoch bigint NOT NULL
);
INSERT INTO transfers.group_epoch (epoch) VALUES (0);

-- Per live group, hour (or day), chain and token: transfers into the group (to in it), out of
-- it (from in it) and inside it (both): flow in = in - self, out = out - self, all = in + out - self.
CREATE TABLE transfers.grp_hourly (
    grp      text COLLATE "C" NOT NULL,
    bucket   timestamptz NOT NULL,
    chain    text COLLATE "C" NOT NULL,
    token    text COLLATE "C" NOT NULL,
    token_id text COLLATE "C" NOT NULL,
    in_n     bigint  NOT NULL,
    in_usd   numeric NOT NULL,
    out_n    bigint  NOT NULL,
    out_usd  numeric NOT NULL,
    self_n   bigint  NOT NULL,
    self_usd numeric NOT NULL,
    PRIMARY KEY (grp, bucket, chain, token)
) WITH (fillfactor = 70);
CREATE TABLE transfers.grp_daily (LIKE transfers.grp_hourly INCLUDING ALL) WITH (fillfactor = 70);

-- Per pair of live groups (sender's, recipient's), hour (or day), chain and token.
CREATE TABLE transfers.grp_pair_hourly (
    from_grp text COLLATE "C" NOT NULL,
    to_grp   text COLLATE "C" NOT NULL,
    bucket   timestamptz NOT NULL,
    chain    text COLLATE "C" NOT NULL,
    token    text COLLATE "C" NOT NULL,
    token_id text COLLATE "C" NOT NULL,
    n        bigint  NOT NULL,
    usd      numeric NOT NULL,
    PRIMARY KEY (from_grp, to_grp, bucket, chain, token)
) WITH (fillfactor = 70);
CREATE TABLE transfers.grp_pair_daily (LIKE transfers.grp_pair_hourly INCLUDING ALL) WITH (fillfactor = 70);

-- The pair_hourly rows of a live entity group ('e:'), keyed by the group and hour first: which
-- of the entity's transfers happened when. side: 1 out (only the sender is in the group), 2 in,
-- 3 self. Pages of an entity's transfers are read through it, and windowed counterparties.
CREATE TABLE transfers.grp_edges (
    grp       text COLLATE "C" NOT NULL,
    bucket    timestamptz NOT NULL,
    from_addr text COLLATE "C" NOT NULL,
    to_addr   text COLLATE "C" NOT NULL,
    chain     text COLLATE "C" NOT NULL,
    token     text COLLATE "C" NOT NULL,
    token_id  text COLLATE "C" NOT NULL,
    side      smallint NOT NULL,
    n         bigint  NOT NULL,
    usd       numeric NOT NULL,
    value     numeric NOT NULL,
    PRIMARY KEY (grp, bucket, from_addr, to_addr, chain, token)
);
-- A pair row of one transfer knows that transfer's USD: capped counts with usdGte/usdLte find
-- enough matching transfers here without reading rows.
CREATE INDEX grp_edges_usd ON transfers.grp_edges (grp, usd) INCLUDE (side, bucket) WHERE n = 1;

-- All-time counterparties of a live entity group: per chain and counterparty address outside
-- the group (all tokens; a token filter reads grp_edges).
CREATE TABLE transfers.grp_cp (
    grp       text COLLATE "C" NOT NULL,
    chain     text COLLATE "C" NOT NULL,
    cp        text COLLATE "C" NOT NULL,
    in_n      bigint  NOT NULL,
    in_usd    numeric NOT NULL,
    in_value  numeric NOT NULL,
    out_n     bigint  NOT NULL,
    out_usd   numeric NOT NULL,
    out_value numeric NOT NULL,
    PRIMARY KEY (grp, chain, cp)
) WITH (fillfactor = 80);

-- +goose Down
DROP TABLE transfers.grp_cp, transfers.grp_edges, transfers.grp_pair_daily, transfers.grp_pair_hourly,
    transfers.grp_daily, transfers.grp_hourly, transfers.group_epoch, transfers.groups, transfers.chain_daily;
DROP FUNCTION transfers.attribution_groups(text, text, text);
DROP INDEX transfers.attributions_address;
CREATE TABLE transfers.pair_hourly_v3 (LIKE transfers.pair_hourly);
INSERT INTO transfers.pair_hourly_v3 SELECT * FROM transfers.pair_hourly;
DROP TABLE transfers.pair_hourly;
ALTER TABLE transfers.pair_hourly_v3 RENAME TO pair_hourly;
ALTER TABLE transfers.pair_hourly ADD PRIMARY KEY (from_addr, to_addr, bucket, chain, token);
CREATE INDEX pair_hourly_to ON transfers.pair_hourly (to_addr, from_addr, bucket);
CREATE TABLE transfers.addr_daily_v3 (LIKE transfers.addr_daily);
INSERT INTO transfers.addr_daily_v3 SELECT * FROM transfers.addr_daily;
DROP TABLE transfers.addr_daily;
ALTER TABLE transfers.addr_daily_v3 RENAME TO addr_daily;
ALTER TABLE transfers.addr_daily ADD PRIMARY KEY (address, bucket, chain, token);
CREATE TABLE transfers.addr_hourly (LIKE transfers.addr_daily INCLUDING ALL);
INSERT INTO transfers.addr_hourly (address, bucket, chain, token, token_id, in_n, in_usd, in_value, out_n, out_usd, out_value)
SELECT address, bucket, chain, token, min(token_id), sum(in_n), sum(in_usd), sum(in_value), sum(out_n), sum(out_usd), sum(out_value)
FROM (SELECT to_addr AS address, bucket, chain, token, token_id, n AS in_n, usd AS in_usd, value AS in_value, 0 AS out_n, 0 AS out_usd, 0 AS out_value FROM transfers.pair_hourly
      UNION ALL
      SELECT from_addr, bucket, chain, token, token_id, 0, 0, 0, n, usd, value FROM transfers.pair_hourly) s
GROUP BY 1, 2, 3, 4;
ALTER TABLE transfers.blocks DROP CONSTRAINT blocks_pkey;
ALTER TABLE transfers.blocks ADD PRIMARY KEY (chain, block_hash);
DROP INDEX transfers.transfers_from, transfers.transfers_to, transfers.transfers_usd;
ALTER TABLE transfers.transfers DROP CONSTRAINT transfers_natural_key, DROP COLUMN uid;
ALTER TABLE transfers.transfers ADD UNIQUE (tx_hash, chain, id, block_hash, block_time);
CREATE INDEX transfers_from_time  ON transfers.transfers (from_addr, block_time);
CREATE INDEX transfers_to_time    ON transfers.transfers (to_addr, block_time);
CREATE INDEX transfers_from_usd   ON transfers.transfers (from_addr, usd NULLS FIRST);
CREATE INDEX transfers_to_usd     ON transfers.transfers (to_addr, usd NULLS FIRST);
CREATE INDEX transfers_from_value ON transfers.transfers (from_addr, unit_value);
CREATE INDEX transfers_to_value   ON transfers.transfers (to_addr, unit_value);
CREATE INDEX transfers_time       ON transfers.transfers (block_time);
CREATE INDEX transfers_value      ON transfers.transfers (unit_value);
CREATE INDEX transfers_usd        ON transfers.transfers (usd NULLS FIRST);
DROP FUNCTION transfers.transfer_uid(text, text, text, text);
