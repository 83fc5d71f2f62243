-- +goose Up
-- The ingest schema itself is created by the migration runner before this file runs.
COMMENT ON SCHEMA ingest IS 'owned by the ingest service';

-- +goose Down
COMMENT ON SCHEMA ingest IS NULL;
