package read

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/volume.sql
var volumeSQL string

// ExchangeVolume is one day of a set's volume with one exchange on one chain.
type ExchangeVolume struct {
	Chain        string
	Day          time.Time
	ExchangeID   string
	ExchangeName string
	DepositedUSD float64
	WithdrawnUSD float64
}

// ExchangeVolumes returns the daily volume of addrs with every exchange, on chains (nil: all),
// ordered by chain, day and exchange id.
func (s *Reader) ExchangeVolumes(ctx context.Context, addrs, chains []string) ([]ExchangeVolume, error) {
	rows, err := s.db.Query(ctx, volumeSQL, addrs, chains)
	if err != nil {
		return nil, fmt.Errorf("exchange volumes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ExchangeVolume, error) {
		var v ExchangeVolume
		err := r.Scan(&v.Chain, &v.Day, &v.ExchangeID, &v.ExchangeName, &v.DepositedUSD, &v.WithdrawnUSD)
		v.Day = v.Day.UTC()
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("exchange volumes: %w", err)
	}
	return out, nil
}
