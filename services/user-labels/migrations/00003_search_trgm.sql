-- +goose Up
-- Search (GET /internal/search, behind /intelligence/search) matches a label's name by substring
-- and its address by prefix, an entity's name by substring and its addresses by prefix
-- (case-insensitive LIKE). Trigram indexes answer those LIKEs without reading every label or
-- address of the user. pg_trgm ships with PostgreSQL (contrib) and is a trusted extension, so a
-- database owner without superuser may create it; it is database-wide and other schemas may use
-- it, so Down leaves it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX labels_search_idx ON userdata.labels
    USING gin (lower(name) gin_trgm_ops, lower(address) gin_trgm_ops);
CREATE INDEX entity_addresses_search_idx ON userdata.entity_addresses
    USING gin (lower(address) gin_trgm_ops);

-- +goose Down
DROP INDEX userdata.entity_addresses_search_idx;
DROP INDEX userdata.labels_search_idx;
