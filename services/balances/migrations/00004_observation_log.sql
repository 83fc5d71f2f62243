-- +goose Up
-- The observation log: the chain.balances.v1 consumer appends each batch here with one COPY (no
-- key, no index, no lock) and commits its offsets; the applier (store.ApplyLog) takes rows from
-- it in set-based batches under the writers' lock and folds them into observations, current,
-- the snapshots and the entity rows with the same rules as a direct write. A redelivered batch
-- appears twice here and once in observations.
CREATE TABLE balances.observation_log (
  chain          text    NOT NULL,
  address        text    NOT NULL,
  token          text    NOT NULL,
  block_number   bigint  NOT NULL,
  block_hash     text    NOT NULL,
  block_time     timestamptz NOT NULL,
  balance        numeric(78,0) NOT NULL,
  owner          text    NOT NULL,
  kind           text    NOT NULL,
  token_id       text    NOT NULL,
  token_name     text    NOT NULL,
  token_symbol   text    NOT NULL,
  token_decimals int     NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 50000, autovacuum_vacuum_insert_scale_factor = 0,
        autovacuum_vacuum_insert_threshold = 50000);

-- +goose Down
DROP TABLE balances.observation_log;
