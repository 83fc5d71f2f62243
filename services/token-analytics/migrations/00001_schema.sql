-- +goose Up
-- The market schema itself is created by the migration runner before this file runs.
COMMENT ON SCHEMA market IS 'owned by the token-analytics service';

-- +goose Down
COMMENT ON SCHEMA market IS NULL;
