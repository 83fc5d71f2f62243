-- Deletes chain $1's transactions of blocks $2 at times $3, frees their hashes (freed_transactions) and returns how many.
WITH del AS (
  DELETE FROM transfers.transactions WHERE chain = $1 AND block_hash = ANY($2) AND block_time = ANY($3) RETURNING hash, chain
), freed AS (INSERT INTO freed_transactions SELECT hash, chain FROM del),
rel AS (DELETE FROM transfers.transaction_ids WHERE nid IN (SELECT transfers.transfer_uid(del.hash, del.chain, '', '') FROM del)) SELECT count(*) FROM del
