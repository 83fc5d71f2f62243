-- +goose Up
-- The balances schema itself is created by the migration runner before this file runs.
COMMENT ON SCHEMA balances IS 'owned by the balances service';

-- +goose Down
COMMENT ON SCHEMA balances IS NULL;
