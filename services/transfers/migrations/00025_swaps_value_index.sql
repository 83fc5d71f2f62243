-- +goose Up
-- A page of swaps sorted by value (read.swapValue, |amount0| in token units) had no index to
-- walk: it read every swap of its window and sorted them. The index holds the value as the
-- read computes it (the same expression, so the planner matches it), with chain and id, the
-- sort's tie-breakers, so a page of all swaps walks each monthly partition's index in the full
-- order and stops at its limit. A base's pages keep reading its sender and receiver (address,
-- time) indexes and sorting those swaps, as transfers' per-address pages by value do.
-- Building it locks the swaps partitions against writes while it runs.
CREATE INDEX swaps_value ON transfers.swaps ((abs(amount0 / power(10::numeric, token0_decimals))), chain, id);

-- +goose Down
DROP INDEX transfers.swaps_value;
