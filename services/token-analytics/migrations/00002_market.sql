-- +goose Up
-- The token registry: one row per pricing id, its deployments, and the latest quote the price
-- source gave (price, supply, market cap, all-time high and low).
CREATE TABLE market.tokens (
    pricing_id         text PRIMARY KEY,
    name               text NOT NULL DEFAULT '',
    symbol             text NOT NULL DEFAULT '',
    tv_ticker          text NOT NULL DEFAULT '',
    stablecoin         boolean NOT NULL DEFAULT false,
    circulating_supply double precision,
    total_supply       double precision,
    market_cap         double precision,
    all_time_high      double precision,
    all_time_low       double precision,
    price              double precision,
    price_time         timestamptz,
    volume_24h         double precision,
    published          bytea, -- the market.tokens.v1 record last enqueued, so an unchanged entry is not re-sent
    updated_at         timestamptz NOT NULL DEFAULT now()
);

-- Where each pricing id is deployed; address '' is a chain's native coin.
CREATE TABLE market.deployments (
    chain      text NOT NULL,
    address    text NOT NULL,
    pricing_id text NOT NULL REFERENCES market.tokens ON DELETE CASCADE,
    decimals   integer NOT NULL,
    PRIMARY KEY (chain, address)
);
CREATE INDEX deployments_pricing_id ON market.deployments (pricing_id);

-- Price history; granularity 1 = daily (00:00 UTC), 2 = hourly (on the hour).
CREATE TABLE market.prices (
    pricing_id  text NOT NULL,
    granularity smallint NOT NULL,
    time        timestamptz NOT NULL,
    price       double precision NOT NULL,
    market_cap  double precision,
    volume      double precision,
    PRIMARY KEY (pricing_id, granularity, time)
);

-- Events to publish (market.tokens.v1, market.prices.v1), written in the transaction of the change.
CREATE TABLE market.outbox (
    id       bigserial PRIMARY KEY,
    event_id uuid NOT NULL DEFAULT gen_random_uuid(),
    topic    text NOT NULL,
    key      text NOT NULL,
    payload  bytea NOT NULL,
    sent_at  timestamptz
);
CREATE INDEX outbox_unsent ON market.outbox (id) WHERE sent_at IS NULL;

-- Every transfer counted in the rollups, by its natural id, so a redelivery adds nothing and a
-- reorg can take exactly its rows back out. counted is false while its block is orphaned.
CREATE TABLE market.flows (
    chain      text NOT NULL,
    id         text NOT NULL,
    chain_type text NOT NULL,
    block_hash text NOT NULL,
    hour       timestamptz NOT NULL,
    token      text NOT NULL,
    from_addr  text NOT NULL,
    to_addr    text NOT NULL,
    value      double precision NOT NULL,
    usd        double precision NOT NULL,
    counted    boolean NOT NULL,
    PRIMARY KEY (chain, id)
);
CREATE INDEX flows_block ON market.flows (chain, block_hash);

-- Blocks a reorg orphaned (and no later reorg made canonical again).
CREATE TABLE market.orphaned_blocks (
    chain      text NOT NULL,
    block_hash text NOT NULL,
    PRIMARY KEY (chain, block_hash)
);

-- What an address counts as in CEX/DEX flows: its attributed entity's type (intel.attributions.v1)
-- and whether it is a DEX pool (seen as a swap's contract on chain.swaps.v1).
CREATE TABLE market.address_classes (
    chain_type  text NOT NULL,
    address     text NOT NULL,
    entity_type text,
    is_pool     boolean NOT NULL DEFAULT false,
    version     bigint NOT NULL DEFAULT 0,
    info        jsonb, -- the attribution as top_flow shows it (entity, label, prediction, deposit service)
    PRIMARY KEY (chain_type, address)
);

-- Per token (chain + contract, '' for native) per hour. The cex/dex columns always equal the sum
-- of market.flow_address_hours over the addresses whose current class is cex/dex.
CREATE TABLE market.flow_hours (
    chain        text NOT NULL,
    token        text NOT NULL,
    hour         timestamptz NOT NULL,
    transfers    bigint NOT NULL DEFAULT 0,
    volume_usd   double precision NOT NULL DEFAULT 0,
    volume_value double precision NOT NULL DEFAULT 0,
    cex_in_usd   double precision NOT NULL DEFAULT 0,
    cex_out_usd  double precision NOT NULL DEFAULT 0,
    dex_in_usd   double precision NOT NULL DEFAULT 0,
    dex_out_usd  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, token, hour)
);
CREATE INDEX flow_hours_hour ON market.flow_hours (hour);

-- Per token per address per hour: what the address received (in) and sent (out).
CREATE TABLE market.flow_address_hours (
    chain      text NOT NULL,
    token      text NOT NULL,
    hour       timestamptz NOT NULL,
    address    text NOT NULL,
    chain_type text NOT NULL,
    in_usd     double precision NOT NULL DEFAULT 0,
    in_value   double precision NOT NULL DEFAULT 0,
    out_usd    double precision NOT NULL DEFAULT 0,
    out_value  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, token, hour, address)
);
CREATE INDEX flow_address_hours_address ON market.flow_address_hours (chain_type, address);

-- Exact balances of the configured non-circulating addresses (chain.balances.v1), one row per
-- observation so a reorg falls back to the previous one.
CREATE TABLE market.reserve_balances (
    chain        text NOT NULL,
    address      text NOT NULL,
    token        text NOT NULL,
    block_number bigint NOT NULL,
    block_hash   text NOT NULL,
    balance      numeric(78,0) NOT NULL,
    PRIMARY KEY (chain, address, token, block_hash)
);

-- The class an address counts as in CEX/DEX flows.
-- +goose StatementBegin
CREATE FUNCTION market.flow_class(entity_type text, is_pool boolean) RETURNS text
IMMUTABLE LANGUAGE sql AS $$
    SELECT CASE WHEN entity_type = 'cex' THEN 'cex' WHEN entity_type = 'dex' OR is_pool THEN 'dex' END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION market.flow_class(text, boolean);
DROP TABLE market.reserve_balances, market.flow_address_hours, market.flow_hours, market.address_classes,
    market.orphaned_blocks, market.flows, market.outbox, market.prices, market.deployments, market.tokens;
