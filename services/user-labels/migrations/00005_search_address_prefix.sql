-- +goose Up
-- Search matches an address by prefix (and by equality) at any query length, and a query of one
-- or two characters by prefixes only (app.MinSubstringQueryRunes). The trigram index finds a
-- short prefix only through trigrams shared by every user's addresses ("0x" is in all EVM
-- ones); these b-trees make an address prefix one range of the user's own rows (LIKE can use a
-- b-tree only in the "C" collation).
CREATE INDEX labels_address_prefix_idx ON userdata.labels (user_id, (lower(address) COLLATE "C"));
CREATE INDEX entity_addresses_prefix_idx ON userdata.entity_addresses (user_id, (lower(address) COLLATE "C"));

-- +goose Down
DROP INDEX userdata.entity_addresses_prefix_idx;
DROP INDEX userdata.labels_address_prefix_idx;
