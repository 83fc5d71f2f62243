-- Every address a batch of attribution changes names: the staged upserts' and the deleted $1.
INSERT INTO relabel_addrs SELECT address FROM stage_attributions UNION SELECT unnest($1::text[])
