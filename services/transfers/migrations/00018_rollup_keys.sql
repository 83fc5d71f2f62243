-- +goose Up
-- The rollup queue holds a transfer's natural key and its block (for a reorg's apply of its
-- blocks), not the ten columns the rollups read: the apply reads those from transfers by the
-- key. Queueing the columns cost a write about a fifth of its rate (500,000 rows: 0.67-0.74 of a
-- raw COPY, 0.95 without the queue); the apply's extra index probe per row is small beside its
-- upserts (docs/transfers.md, "Consumers").
--
-- Rows queued by a version 17 writer become keys here. Transfers identical in every queued
-- column are interchangeable for the rollups, so each queued row takes a distinct one of them
-- (numbered on both sides).
CREATE TABLE transfers.rollup_keys (
    block_time   timestamptz NOT NULL,
    uid          uuid        NOT NULL,
    block_number bigint      NOT NULL,
    chain        text COLLATE "C" NOT NULL
);
ALTER TABLE transfers.rollup_keys SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 20000);

INSERT INTO transfers.rollup_keys (block_time, uid, block_number, chain)
SELECT t.block_time, t.uid, t.block_number, t.chain
FROM (SELECT q.*, row_number() OVER (PARTITION BY chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id,
        unit_value, usd) AS k
      FROM transfers.rollup_queue q) q
JOIN (SELECT t.chain, t.block_hash, t.block_number, t.block_time, t.from_addr, t.to_addr, t.token, t.token_id, t.unit_value, t.usd, t.uid,
        row_number() OVER (PARTITION BY t.chain, t.block_hash, t.block_number, t.block_time, t.from_addr, t.to_addr, t.token, t.token_id,
          t.unit_value, t.usd ORDER BY t.uid) AS k
      -- Each queued block's rows by its time (the natural key's index), not a scan of transfers.
      FROM (SELECT DISTINCT block_time, chain, block_hash FROM transfers.rollup_queue) b
      CROSS JOIN LATERAL (SELECT * FROM transfers.transfers t
        WHERE t.block_time = b.block_time AND t.chain = b.chain AND t.block_hash = b.block_hash OFFSET 0) t) t
  ON t.chain = q.chain AND t.block_hash = q.block_hash AND t.block_number = q.block_number AND t.block_time = q.block_time
 AND t.from_addr = q.from_addr AND t.to_addr = q.to_addr AND t.token = q.token AND t.token_id = q.token_id
 AND t.unit_value = q.unit_value AND t.usd IS NOT DISTINCT FROM q.usd AND t.k = q.k;
DROP TABLE transfers.rollup_queue;

-- +goose Down
CREATE TABLE transfers.rollup_queue AS
  SELECT chain, block_hash, block_number, block_time, from_addr, to_addr, token, token_id, unit_value, usd
  FROM transfers.transfers WITH NO DATA;
ALTER TABLE transfers.rollup_queue SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 20000);
INSERT INTO transfers.rollup_queue
SELECT t.chain, t.block_hash, t.block_number, t.block_time, t.from_addr, t.to_addr, t.token, t.token_id, t.unit_value, t.usd
FROM transfers.rollup_keys k JOIN transfers.transfers t ON t.block_time = k.block_time AND t.uid = k.uid;
DROP TABLE transfers.rollup_keys;
