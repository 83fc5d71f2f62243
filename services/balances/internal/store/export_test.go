package store

import "context"

// QueryText is the statement named name (benchmarks EXPLAIN it).
func QueryText(name string) string { return q(name) }

// PrunePagesForTest is how many pages observations has (prune_pages.sql).
func (s *Store) PrunePagesForTest(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, q("prune_pages")).Scan(&n)
	return n, err
}
