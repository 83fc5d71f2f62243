-- +goose Up
-- The transfers schema itself is created by the migration runner before this file runs.
COMMENT ON SCHEMA transfers IS 'owned by the transfers service';

-- +goose Down
COMMENT ON SCHEMA transfers IS NULL;
