-- +goose Up

-- Every change of an address's attribution (and of an entity) takes the next value; the
-- publisher and the in-process caches follow changes by it, and it is the Attribution event's
-- version.
CREATE SEQUENCE intel.attribution_version;

CREATE TABLE intel.entities (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    type        text NOT NULL DEFAULT '',
    note        text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    website     text NOT NULL DEFAULT '',
    twitter     text NOT NULL DEFAULT '',
    linkedin    text NOT NULL DEFAULT '',
    service     text NOT NULL DEFAULT '',
    source      text NOT NULL,
    version     bigint NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX entities_version ON intel.entities (version);

CREATE TABLE intel.tags (
    id               text PRIMARY KEY,
    label            text NOT NULL,
    rank             integer NOT NULL DEFAULT 100,
    disable_page     boolean NOT NULL DEFAULT false,
    exclude_entities boolean NOT NULL DEFAULT false,
    chain            text NOT NULL DEFAULT ''
);

-- What each source says about an address. The resolved attribution (intel.addresses) takes the
-- entity of the most confident claim that names one, and the label of that claim (or of the most
-- confident labelled claim when it has none).
CREATE TABLE intel.claims (
    chain_type text NOT NULL,
    address    text NOT NULL,
    source     text NOT NULL,
    entity_id  text REFERENCES intel.entities (id),
    label      text NOT NULL DEFAULT '',
    confidence real NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_type, address, source)
);
CREATE INDEX claims_entity ON intel.claims (entity_id) WHERE entity_id IS NOT NULL;

CREATE TABLE intel.address_tags (
    chain_type text NOT NULL,
    address    text NOT NULL,
    tag_id     text NOT NULL REFERENCES intel.tags (id),
    params     text NOT NULL DEFAULT '',
    source     text NOT NULL,
    PRIMARY KEY (chain_type, address, tag_id, params)
);
CREATE INDEX address_tags_tag ON intel.address_tags (tag_id, params);

-- The resolved attribution of every known address: the read model the API serves and the
-- outbox of intel.attributions.v1 (rows with a version above the publish cursor are unpublished).
CREATE TABLE intel.addresses (
    chain_type          text NOT NULL,
    address             text NOT NULL,
    entity_id           text REFERENCES intel.entities (id),
    label               text NOT NULL DEFAULT '',
    confidence          real NOT NULL DEFAULT 0,
    source              text NOT NULL DEFAULT '',
    predicted_entity_id text REFERENCES intel.entities (id),
    deposit_service_id  text REFERENCES intel.entities (id),
    is_contract         boolean NOT NULL DEFAULT false,
    cluster_ids         text[] NOT NULL DEFAULT '{}',
    version             bigint NOT NULL,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_type, address)
);
CREATE INDEX addresses_version ON intel.addresses (version);
CREATE INDEX addresses_entity ON intel.addresses (entity_id) WHERE entity_id IS NOT NULL;
CREATE INDEX addresses_predicted ON intel.addresses (predicted_entity_id) WHERE predicted_entity_id IS NOT NULL;

CREATE TABLE intel.publish_cursor (
    name    text PRIMARY KEY,
    version bigint NOT NULL
);
INSERT INTO intel.publish_cursor (name, version) VALUES ('attributions', 0);

-- Highest offset applied per topic partition by consumers whose writes are not idempotent by
-- themselves (sums); written in the same transaction as the data.
CREATE TABLE intel.consumer_offsets (
    topic     text NOT NULL,
    partition integer NOT NULL,
    "offset"  bigint NOT NULL,
    PRIMARY KEY (topic, partition)
);

-- Heuristic inputs from chain.transfers.v1: distinct (from, to) pairs per chain.
CREATE TABLE intel.edges (
    chain      text NOT NULL,
    chain_type text NOT NULL,
    from_addr text NOT NULL,
    to_addr   text NOT NULL,
    first_ms  bigint NOT NULL,
    last_ms   bigint NOT NULL,
    PRIMARY KEY (chain, from_addr, to_addr)
);
CREATE INDEX edges_to ON intel.edges (chain, to_addr);

-- Per-address activity (precomputed figures behind entity summaries).
CREATE TABLE intel.address_activity (
    chain_type     text NOT NULL,
    address        text NOT NULL,
    volume_usd     double precision NOT NULL DEFAULT 0,
    transfer_count bigint NOT NULL DEFAULT 0,
    first_ms       bigint NOT NULL,
    last_ms        bigint NOT NULL,
    PRIMARY KEY (chain_type, address)
);

-- Latest balance observation of candidate addresses (no operator entity), for predictions.
CREATE TABLE intel.balances (
    chain         text NOT NULL,
    address       text NOT NULL,
    token_address text NOT NULL,
    token_id      text NOT NULL DEFAULT '',
    decimals      integer NOT NULL,
    balance       numeric(78, 0) NOT NULL,
    block_number  bigint NOT NULL,
    PRIMARY KEY (chain, address, token_address)
);
CREATE INDEX balances_address ON intel.balances (address);

CREATE TABLE intel.contracts (
    chain          text NOT NULL,
    address        text NOT NULL,
    deployer       text NOT NULL,
    deploy_tx_hash text NOT NULL,
    block_time_ms  bigint NOT NULL,
    bytecode_size  integer NOT NULL,
    PRIMARY KEY (chain, address)
);

-- Token metadata seen on chain (chain.tokens.v1).
CREATE TABLE intel.tokens (
    chain          text NOT NULL,
    address        text NOT NULL,
    name           text NOT NULL,
    symbol         text NOT NULL,
    decimals       integer NOT NULL,
    pricing_id     text NOT NULL DEFAULT '',
    deployer       text NOT NULL DEFAULT '',
    deploy_tx_hash text NOT NULL DEFAULT '',
    PRIMARY KEY (chain, address)
);

-- The token registry (market.tokens.v1).
CREATE TABLE intel.market_tokens (
    pricing_id text PRIMARY KEY,
    name       text NOT NULL,
    symbol     text NOT NULL
);
CREATE TABLE intel.token_deployments (
    pricing_id text NOT NULL REFERENCES intel.market_tokens (pricing_id) ON DELETE CASCADE,
    chain      text NOT NULL,
    address    text NOT NULL,
    decimals   integer NOT NULL,
    PRIMARY KEY (pricing_id, chain, address)
);
CREATE INDEX token_deployments_address ON intel.token_deployments (chain, address);

-- Price points (market.prices.v1); a week is kept.
CREATE TABLE intel.prices (
    pricing_id text NOT NULL,
    time_ms    bigint NOT NULL,
    price      double precision NOT NULL,
    PRIMARY KEY (pricing_id, time_ms)
);

-- +goose Down
DROP TABLE intel.prices, intel.token_deployments, intel.market_tokens, intel.tokens, intel.contracts,
    intel.balances, intel.address_activity, intel.edges, intel.consumer_offsets, intel.publish_cursor,
    intel.addresses, intel.address_tags, intel.claims, intel.tags, intel.entities;
DROP SEQUENCE intel.attribution_version;
