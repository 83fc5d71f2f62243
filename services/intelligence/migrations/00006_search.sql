-- +goose Up
-- Search (GET /intelligence/search) finds addresses by address prefix and by label prefix over
-- every attributed address. Byte-ordered ("C") b-trees serve both a LIKE 'prefix%' range and the
-- ORDER BY of the same expression, so a page of matches is read straight off the index however
-- many addresses match. Entities, tags and tokens are small tables and are scanned.
CREATE INDEX addresses_search_address ON intel.addresses ((address COLLATE "C"));
CREATE INDEX addresses_search_label ON intel.addresses ((lower(label) COLLATE "C"), chain_type, address)
    WHERE label <> '';

-- GET /cluster/{id}/summary reads a cluster's members.
CREATE INDEX addresses_clusters ON intel.addresses USING gin (cluster_ids) WHERE cluster_ids <> '{}';

-- +goose Down
DROP INDEX intel.addresses_clusters;
DROP INDEX intel.addresses_search_label;
DROP INDEX intel.addresses_search_address;
