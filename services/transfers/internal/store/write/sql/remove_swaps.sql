-- Deletes chain $1's swaps of blocks $2 at times $3, frees their natural ids (freed_swaps) and returns how many.
WITH del AS (
  DELETE FROM transfers.swaps WHERE chain = $1 AND block_hash = ANY($2) AND block_time = ANY($3) RETURNING tx_hash, chain, id
), freed AS (INSERT INTO freed_swaps SELECT tx_hash, chain, id FROM del),
rel AS (DELETE FROM transfers.swap_ids WHERE nid IN (SELECT transfers.transfer_uid(del.tx_hash, del.chain, del.id, '') FROM del)) SELECT count(*) FROM del
