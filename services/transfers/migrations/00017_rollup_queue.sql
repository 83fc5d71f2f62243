-- +goose Up
-- Queued rollups (docs/transfers.md, "Consumers"). A transfers write stores its new rows and
-- appends the columns the rollups need here, in the same transaction; the rollup worker moves
-- rows out (DELETE ... RETURNING) and adds them to every rollup, in one transaction, so each
-- row is counted exactly once. No index: rows are taken in any order (sums commute), a batch
-- at a time, with FOR UPDATE SKIP LOCKED so replicas' workers share the queue.
-- CREATE TABLE AS keeps the transfers columns' types and collations.
CREATE TABLE transfers.rollup_queue AS
  SELECT chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd
  FROM transfers.transfers WITH NO DATA;
-- Rows are deleted as fast as they arrive: vacuum it often, so a scan for the next batch does
-- not walk dead rows.
ALTER TABLE transfers.rollup_queue SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 20000);

-- +goose Down
DROP TABLE transfers.rollup_queue;
