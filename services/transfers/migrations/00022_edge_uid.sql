-- +goose Up
-- The natural key's uid of an entity pair row's transfer while the row holds exactly one (its
-- time is then t_first): a keyset page turn reads such a row's transfer through the natural
-- key's index (block_time, uid), whose entries for the page's span lie on a few leaf pages,
-- instead of probing the sender's or recipient's index, one leaf page per pair row
-- (store.edgeNewestPage). The apply writes it for a row it creates from one transfer; any other
-- change of the row (a second transfer, a subtraction) makes it NULL, as are rows written before
-- and rows a relabel adds: those are read through the addresses' indexes. Added without a
-- default: no rewrite.
ALTER TABLE transfers.grp_edges ADD COLUMN uid uuid;

-- +goose Down
ALTER TABLE transfers.grp_edges DROP COLUMN uid;
