package store

import (
	"context"
	"fmt"

	"github.com/chainintel/chainintel/services/transfers/internal/store/attribution"
	"github.com/jackc/pgx/v5"
)

// Entity, Attribution and AddressKey are the attribution read model's (package attribution).
type (
	Entity      = attribution.Entity
	Attribution = attribution.Attribution
	AddressKey  = attribution.AddressKey
)

// SetAddresses lists the distinct addresses of a set.
func (s *Store) SetAddresses(ctx context.Context, set AddrSet) ([]string, error) {
	b := s.newb(sqlb{})
	rows, err := s.db.Query(ctx, "SELECT DISTINCT a FROM ("+b.source(set)+") s(a) ORDER BY a", b.args...)
	if err != nil {
		return nil, fmt.Errorf("addresses of set: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
