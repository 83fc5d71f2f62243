-- +goose Up
-- The attribution read model's change log: the addresses each attribution batch inserted,
-- changed or deleted, numbered in commit order (batches hold the group lock exclusively, so a
-- later number never commits before an earlier one). Every replica keeps the attributions it
-- renders in process (store.attrCache) and, before each use, reads this log past the point it
-- has seen and drops what changed. Entries older than an hour are pruned; `pruned` is the last
-- number pruned, so a cache that fell further behind starts over instead of missing a change.
CREATE TABLE transfers.attribution_changes (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    chain_type text NOT NULL,
    address    text COLLATE "C" NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attribution_changes_at ON transfers.attribution_changes (at);

CREATE TABLE transfers.attribution_log (
    one    boolean PRIMARY KEY DEFAULT true CHECK (one),
    pruned bigint  NOT NULL
);
INSERT INTO transfers.attribution_log (pruned) VALUES (0);

-- +goose Down
DROP TABLE transfers.attribution_changes, transfers.attribution_log;
