package store

// QueryText is the statement named name (benchmarks EXPLAIN it).
func QueryText(name string) string { return q(name) }
