-- Claims the natural ids of a batch ($1 chains, $2 ids, parallel arrays), or locks them when they
-- are claimed already (DO UPDATE locks the row even though its WHERE updates nothing), in key
-- order, so writers of one id run one after the other and each sees the copies of the other.
-- Returns the ids claimed now (a row locked but not updated is not returned): no copy of them
-- was stored before.
INSERT INTO market.flow_ids AS c (chain, id)
SELECT DISTINCT chain, id FROM unnest($1::text[], $2::text[]) AS k(chain, id)
ORDER BY 1, 2
ON CONFLICT (chain, id) DO UPDATE SET id = excluded.id WHERE false
RETURNING chain, id
