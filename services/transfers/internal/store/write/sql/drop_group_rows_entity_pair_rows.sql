-- Deletes every entity_pair_rows row of the groups $1.
DELETE FROM transfers.entity_pair_rows WHERE grp = ANY($1::text[])
