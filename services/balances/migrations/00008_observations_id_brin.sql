-- +goose NO TRANSACTION
-- +goose Up
-- The applier reads observations by id range, (mark, least(mark + round, head)], instead of the
-- first round's ids past its mark in order (take_observations.sql), so the id needs no btree: a
-- BRIN (a few pages a summary, ids being appended in order) finds a range's pages, and the
-- consumer's COPY no longer writes a btree entry per row.
--
-- head is the newest appended id: each append moves it in its transaction, under the appenders'
-- lock (append_head.sql), so an id at or below the head of the applier's snapshot is committed
-- or rolled back for good, and the applier never needs max(id) (a scan with only a BRIN).
CREATE TABLE IF NOT EXISTS balances.append_head (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  id  bigint NOT NULL -- every append with an id up to it is committed or rolled back
);
INSERT INTO balances.append_head (id) SELECT coalesce(max(id), 0) FROM balances.observations ON CONFLICT DO NOTHING;
-- Outside a transaction, so the consumer's COPY is not blocked while the index builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS observations_id_brin ON balances.observations USING brin (id) WITH (pages_per_range = 16);
DROP INDEX CONCURRENTLY IF EXISTS balances.observations_id;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS observations_id ON balances.observations (id);
DROP INDEX CONCURRENTLY IF EXISTS balances.observations_id_brin;
DROP TABLE IF EXISTS balances.append_head;
