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
// statement that merges them. No index holds the value: a page by value reads the matching
// swaps of its arms and sorts them (a base's through its sender and receiver indexes).
func swapSource(sortKey string) (table, cols string) {
	if sortKey != "value" {
		return "transfers.swaps", swapSelect
	}
	return "(SELECT *, " + swapValue + " AS unit_value FROM transfers.swaps) s", swapSelect + ", unit_value"
}
