-- The time of the first transfer from or to addresses $1 in [$2, $3).
SELECT min(block_time) FROM transfers.transfers
WHERE (from_addr = ANY($1) OR to_addr = ANY($1)) AND block_time >= $2 AND block_time < $3
