-- +goose Up
-- The userdata schema itself is created by the migration runner before this file runs.
COMMENT ON SCHEMA userdata IS 'owned by the user-labels service';

-- +goose Down
COMMENT ON SCHEMA userdata IS NULL;
