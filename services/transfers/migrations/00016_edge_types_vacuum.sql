-- +goose NO TRANSACTION
-- +goose Up
-- Migration 15 rewrote every pair row of grp_edges. Until a vacuum, the old row versions stay
-- and the visibility map is cleared, so index-only reads of the table visit the heap: reads
-- with a type on an entity's other side are several times slower until this VACUUM (seconds on
-- a large table, a moment on a fresh database). VACUUM cannot run in a transaction, hence a
-- migration of its own.
VACUUM (ANALYZE) transfers.grp_edges;

-- +goose Down
SELECT 1;
