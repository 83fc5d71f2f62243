package app

import (
	"context"
	"errors"
	"time"
)

// ErrImporting says the registry and price imports a replica runs at start (the configured
// token lists and price CSVs) are not finished: its price history may still lack what they
// bring, so a caller that would take a missing point as "no price" retries later instead.
var ErrImporting = errors.New("the token list and price imports are not finished")

// WindowPoint is one price point of POST /internal/prices/window.
type WindowPoint struct {
	TimeMs int64   `json:"timeMs"`
	Price  float64 `json:"price"`
}

// Limits of POST /internal/prices/window.
const (
	MaxWindowIDs = 1000
	MaxWindow    = 7 * 24 * time.Hour
)

// MarkImported records that the imports at start are done: from then on PriceWindow answers.
func (s *Service) MarkImported() { s.imported.Store(true) }

// PriceWindow returns the points of each of ids with from <= time <= to, oldest first, one per
// time (of two at the same time the hourly one, as the price in force takes it); ids without
// any point there are absent. It is ErrImporting until MarkImported, so an id without points
// means that the history holds none there, not that it is still being imported.
func (s *Service) PriceWindow(ctx context.Context, ids []string, from, to time.Time) (map[string][]WindowPoint, error) {
	if !s.imported.Load() {
		return nil, ErrImporting
	}
	if len(ids) == 0 {
		return map[string][]WindowPoint{}, nil
	}
	return s.st.PriceWindow(ctx, ids, from, to)
}
