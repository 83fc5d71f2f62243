-- +goose Up
-- Search ranks a user's matches exact, then prefix, then substring, ties by the lower-cased name
-- in byte order ("C" collation). A b-tree in that order answers a name-prefix LIKE as one index
-- range (LIKE can use a b-tree only in the "C" collation) and hands the matches of any LIKE over
-- in ranking order, so the first matches of each kind are read off the index and the search can
-- stop there instead of reading and sorting every match.
CREATE INDEX labels_name_order_idx ON userdata.labels (user_id, (lower(name) COLLATE "C"), chain_type, address);
CREATE INDEX entities_name_order_idx ON userdata.entities (user_id, (lower(name) COLLATE "C"), seq);

-- +goose Down
DROP INDEX userdata.entities_name_order_idx;
DROP INDEX userdata.labels_name_order_idx;
