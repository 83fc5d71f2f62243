package client

import (
	"context"
	"net/http"
	"time"
)

// PricePoint is one point of a token's price history.
type PricePoint struct {
	TimeMs int64   `json:"timeMs"`
	Price  float64 `json:"price"`
}

// MaxWindowIDs is the most pricing ids one PriceWindow call asks about (the service's
// app.MaxWindowIDs); MaxWindow the longest window (app.MaxWindow).
const (
	MaxWindowIDs = 1000
	MaxWindow    = 7 * 24 * time.Hour
)

// PriceWindow returns each of ids' price points with from <= time <= to, oldest first, one per
// time (POST /internal/prices/window); ids without any are absent. While the service's imports
// at start run, and whenever it cannot answer, the error matches httpx.ErrUnavailable: the
// caller retries rather than take the missing points as no price.
func (c *Client) PriceWindow(ctx context.Context, ids []string, from, to time.Time) (map[string][]PricePoint, error) {
	var out struct {
		Prices map[string][]PricePoint `json:"prices"`
	}
	body := struct {
		IDs    []string `json:"ids"`
		FromMs int64    `json:"fromMs"`
		ToMs   int64    `json:"toMs"`
	}{ids, from.UnixMilli(), to.UnixMilli()}
	if err := c.c.Do(ctx, http.MethodPost, "/internal/prices/window", nil, body, &out); err != nil {
		return nil, err
	}
	if out.Prices == nil {
		out.Prices = map[string][]PricePoint{}
	}
	return out.Prices, nil
}
