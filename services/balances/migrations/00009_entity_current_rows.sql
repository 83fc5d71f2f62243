-- +goose Up
-- entity_current holds a row, at 0 too, for every (entity, chain, token) entity_change has rows
-- of: read_entity_back.sql counts an entity's balances on a past day back from those rows, so a
-- token the entity held then and holds none of now needs one. Writers before this migration
-- skipped a row whose balance was 0 when created (a relabel of an address holding 0 now, a late
-- observation of a past day); this adds the missing ones at the sum of their changes.
INSERT INTO balances.entity_current (entity_id, chain, token, balance)
SELECT entity_id, chain, token, sum(delta) FROM balances.entity_change GROUP BY entity_id, chain, token
ON CONFLICT (entity_id, chain, token) DO NOTHING;

-- +goose Down
-- The rows added are kept: they are what the writers keep from now on.
SELECT 1;
