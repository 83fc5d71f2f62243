-- +goose Up

-- chain_type maps a public chain name to its address family, so rows keyed by chain meet
-- attributions keyed by chain type. It mirrors libs/chains.
CREATE FUNCTION balances.chain_type(chain text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE chain
    WHEN 'bitcoin' THEN 'bitcoin' WHEN 'tron' THEN 'tron' WHEN 'solana' THEN 'solana'
    WHEN 'dogecoin' THEN 'dogecoin' WHEN 'ton' THEN 'ton' ELSE 'evm' END
$$;

-- Every balance observation, kept so a reorg can fall back to the newest surviving one. void
-- marks an observation of an orphaned block (kept: the block can become canonical again).
CREATE TABLE balances.observations (
  chain        text    NOT NULL,
  address      text    NOT NULL,
  token        text    NOT NULL, -- '' for the native coin
  block_number bigint  NOT NULL,
  block_hash   text    NOT NULL,
  block_time   timestamptz NOT NULL,
  balance      numeric(78,0) NOT NULL,
  owner        text    NOT NULL DEFAULT '',
  kind         text    NOT NULL DEFAULT '',
  void         boolean NOT NULL DEFAULT false,
  PRIMARY KEY (chain, address, token, block_number, block_hash)
);
CREATE INDEX observations_block ON balances.observations (chain, block_hash);

-- Blocks a reorg orphaned and no later reorg made canonical again.
CREATE TABLE balances.orphaned_blocks (
  chain text NOT NULL,
  hash  text NOT NULL,
  PRIMARY KEY (chain, hash)
);

-- The current balance: the newest surviving observation by block of each (chain, address, token).
CREATE TABLE balances.current (
  chain        text    NOT NULL,
  address      text    NOT NULL,
  token        text    NOT NULL,
  block_number bigint  NOT NULL,
  block_hash   text    NOT NULL,
  block_time   timestamptz NOT NULL,
  balance      numeric(78,0) NOT NULL,
  owner        text    NOT NULL DEFAULT '',
  kind         text    NOT NULL DEFAULT '',
  -- Address first: an entity's balances are read address by address, on every chain at once.
  PRIMARY KEY (address, chain, token)
);
CREATE INDEX current_holders ON balances.current (chain, token, balance DESC) WHERE balance > 0;
CREATE INDEX current_owner ON balances.current (owner, chain) WHERE owner <> '';

-- Sum of current balances per token: the supply the holders' pctOfCap divides by.
CREATE TABLE balances.token_supply (
  chain  text NOT NULL,
  token  text NOT NULL,
  supply numeric(78,0) NOT NULL,
  PRIMARY KEY (chain, token)
);

-- Daily UTC snapshots per address: the balance at the end of each day that has a surviving
-- observation (the newest of that day); a day without a row carries the previous row's balance.
CREATE TABLE balances.address_daily (
  chain        text   NOT NULL,
  address      text   NOT NULL,
  token        text   NOT NULL,
  day          date   NOT NULL,
  block_number bigint NOT NULL,
  balance      numeric(78,0) NOT NULL,
  PRIMARY KEY (address, chain, token, day)
);

-- Daily UTC snapshots per operator entity as changes: an entity's balance of a token at the end
-- of day D is the sum of its rows' delta up to D (the sum of its addresses' snapshots).
CREATE TABLE balances.entity_change (
  entity_id text NOT NULL,
  chain     text NOT NULL,
  token     text NOT NULL,
  day       date NOT NULL,
  delta     numeric(78,0) NOT NULL,
  PRIMARY KEY (entity_id, chain, token, day)
);

-- An operator entity's current balance per token (the sum of entity_change).
CREATE TABLE balances.entity_current (
  entity_id text NOT NULL,
  chain     text NOT NULL,
  token     text NOT NULL,
  balance   numeric(78,0) NOT NULL,
  PRIMARY KEY (entity_id, chain, token)
);
CREATE INDEX entity_current_holders ON balances.entity_current (chain, token, balance DESC) WHERE balance > 0;

-- Token metadata an observation carried, for tokens the registry does not know.
CREATE TABLE balances.observed_tokens (
  chain    text NOT NULL,
  token    text NOT NULL,
  token_id text NOT NULL,
  name     text NOT NULL,
  symbol   text NOT NULL,
  decimals int  NOT NULL,
  PRIMARY KEY (chain, token)
);

-- The token registry (market.tokens.v1).
CREATE TABLE balances.market_tokens (
  pricing_id text PRIMARY KEY,
  name       text NOT NULL,
  symbol     text NOT NULL,
  tv_ticker  text NOT NULL DEFAULT ''
);
CREATE TABLE balances.deployments (
  chain      text NOT NULL,
  token      text NOT NULL, -- '' for the native coin
  pricing_id text NOT NULL REFERENCES balances.market_tokens ON DELETE CASCADE,
  decimals   int  NOT NULL,
  PRIMARY KEY (chain, token)
);
CREATE INDEX deployments_pricing ON balances.deployments (pricing_id);

-- Prices (market.prices.v1): daily, hourly and live points.
CREATE TABLE balances.prices (
  pricing_id  text NOT NULL,
  time        timestamptz NOT NULL,
  price       double precision NOT NULL,
  PRIMARY KEY (pricing_id, time)
);
-- The close of each UTC day: the last price point of the day (history and portfolios price a
-- day at its close; a day without a point carries the previous close).
CREATE TABLE balances.price_days (
  pricing_id text NOT NULL,
  day        date NOT NULL,
  time       timestamptz NOT NULL,
  price      double precision NOT NULL,
  PRIMARY KEY (pricing_id, day)
);

-- Attributions (intel.attributions.v1), the newest version of each address; entity_id is the
-- membership the entity snapshots follow.
CREATE TABLE balances.attributions (
  chain_type    text   NOT NULL,
  address       text   NOT NULL,
  entity_id     text   NOT NULL DEFAULT '',
  label         text   NOT NULL DEFAULT '',
  predicted_id  text   NOT NULL DEFAULT '',
  deposit_service_id text NOT NULL DEFAULT '',
  is_contract   boolean NOT NULL DEFAULT false,
  version       bigint NOT NULL,
  PRIMARY KEY (chain_type, address)
);
CREATE INDEX attributions_entity ON balances.attributions (entity_id, chain_type) WHERE entity_id <> '';

-- Entities named by attributions (operator and predicted).
CREATE TABLE balances.entities (
  id       text PRIMARY KEY,
  name     text NOT NULL,
  type     text NOT NULL,
  note     text NOT NULL DEFAULT '',
  service  text NOT NULL DEFAULT '',
  website  text NOT NULL DEFAULT '',
  twitter  text NOT NULL DEFAULT '',
  linkedin text NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE balances.entities, balances.attributions, balances.price_days, balances.prices, balances.deployments,
  balances.market_tokens, balances.observed_tokens, balances.entity_current, balances.entity_change,
  balances.address_daily, balances.token_supply, balances.current, balances.orphaned_blocks,
  balances.observations;
DROP FUNCTION balances.chain_type(text);
