-- +goose Up
-- Each pair row of a live entity group carries the live entity-type group of its sender and of
-- its recipient ('t:<type>', '' when the address has no type or its type group is not live), as
-- the read model had them when the row was written; relabels and type groups turning live
-- rewrite them (store.relabel, store.materialize). A condition on a pair row's other side that
-- is a type (from=type:individual&to=<exchange>, from=<exchange>&to=!type:cex) is then a test
-- of the row itself, where it used to probe the attribution index for every pair row (up to
-- 10,000 matches): a type holds too many addresses to hash.
CREATE FUNCTION transfers.type_group(groups text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce((SELECT min(g) FROM unnest(groups) g WHERE g LIKE 't:%'), '');

ALTER TABLE transfers.grp_edges
    ADD COLUMN from_t text COLLATE "C" NOT NULL DEFAULT '',
    ADD COLUMN to_t   text COLLATE "C" NOT NULL DEFAULT '';

-- The existing pair rows get their types in one pass. grp_edges_usd is dropped first and built
-- again after it, now carrying the types (so capped counts with a USD range and a type on the
-- other side read single-transfer pair rows index-only): the UPDATE then does not maintain it
-- for every rewritten row.
DROP INDEX transfers.grp_edges_usd;
UPDATE transfers.grp_edges e SET
    from_t = coalesce((SELECT 't:' || a.entity_type FROM transfers.attributions a
                       WHERE a.address = e.from_addr AND a.entity_type <> ''
                         AND EXISTS (SELECT 1 FROM transfers.groups g WHERE g.grp = 't:' || a.entity_type AND g.live)
                       ORDER BY 1 LIMIT 1), ''),
    to_t = coalesce((SELECT 't:' || a.entity_type FROM transfers.attributions a
                     WHERE a.address = e.to_addr AND a.entity_type <> ''
                       AND EXISTS (SELECT 1 FROM transfers.groups g WHERE g.grp = 't:' || a.entity_type AND g.live)
                     ORDER BY 1 LIMIT 1), '');
CREATE INDEX grp_edges_usd ON transfers.grp_edges (grp, usd) INCLUDE (side, bucket, from_t, to_t) WHERE n = 1;
-- Statistics of the new columns: without them an entity's hours with a type condition are
-- planned as a scan of the group's pair rows instead of a probe of its index.
ANALYZE transfers.grp_edges;

-- +goose Down
DROP INDEX transfers.grp_edges_usd;
CREATE INDEX grp_edges_usd ON transfers.grp_edges (grp, usd) INCLUDE (side, bucket) WHERE n = 1;
ALTER TABLE transfers.grp_edges DROP COLUMN from_t, DROP COLUMN to_t;
DROP FUNCTION transfers.type_group(text[]);
