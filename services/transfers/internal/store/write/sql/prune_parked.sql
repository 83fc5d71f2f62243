-- Drops chain $1's parked rows older than $2 (ParkedRetention) behind its newest stored block.
WITH newest AS (
  SELECT block_time - $2::interval AS t FROM transfers.blocks WHERE chain = $1 ORDER BY block_number DESC LIMIT 1
), a AS (DELETE FROM transfers.parked_transfers WHERE chain = $1 AND block_time < (SELECT t FROM newest)),
b AS (DELETE FROM transfers.parked_transactions WHERE chain = $1 AND block_time < (SELECT t FROM newest))
DELETE FROM transfers.parked_swaps WHERE chain = $1 AND block_time < (SELECT t FROM newest)
