-- The time of the last transfer from or to addresses $1 in [$2, $3).
SELECT max(block_time) FROM transfers.transfers
WHERE (from_addr = ANY($1) OR to_addr = ANY($1)) AND block_time >= $2 AND block_time < $3
