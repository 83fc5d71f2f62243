package read

// swapValue is what /swaps sorts by with sortKey=value: the size of the swap's first token
// amount in token units, |amount0| / 10^decimals0. A swap moves two amounts of opposite signs
// and the public text does not say which is its value; token0 is the one the public fields list
// first (value0, unitValue0), and its magnitude orders a sale and a purchase of the same size
// alike. It is numeric, so equal amounts tie exactly and break on chain, then id.
const swapValue = `abs(amount0 / power(10::numeric, token0_decimals))`

// swapSource is the table and columns a /swaps page reads its arms from: sorted by value, the
// swaps with their value as the column unit_value, so the sort (orderBy, and sortedNotWalked
// for a window's slivers) names it as it names transfers' unit_value, in the arms and in the
// statement that merges them. The subquery is flattened, so the sort is on swapValue itself,
// which the swaps_value index (migration 25) holds with chain and id: a page without a base
// walks it; a base's page reads its swaps through the sender and receiver indexes and sorts
// them. swapValue and the index's expression must stay the same text.
func swapSource(sortKey string) (table, cols string) {
	if sortKey != "value" {
		return "transfers.swaps", swapSelect
	}
	return "(SELECT *, " + swapValue + " AS unit_value FROM transfers.swaps) s", swapSelect + ", unit_value"
}
