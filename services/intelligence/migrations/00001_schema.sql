-- +goose Up
-- The intel schema itself is created by the migration runner before this file runs.
COMMENT ON SCHEMA intel IS 'owned by the intelligence service';

-- +goose Down
COMMENT ON SCHEMA intel IS NULL;
