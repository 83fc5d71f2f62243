package source

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/services/token-analytics/internal/app"
)

// MaxCSVRows bounds a price CSV.
const MaxCSVRows = 1_000_000

// ParsePriceCSV reads a snapped_at,price,market_cap,total_volume history (CoinGecko's export:
// "2023-08-26 00:00:00 UTC") as daily points of id. The export is daily: every row is the point
// of its UTC day, stored at the day's midnight, including the rows snapped late (CoinGecko's
// files have some at 00:05 or 23:29); were such a row an hourly point, it would be the price in
// force wherever no newer hourly point exists, years after its day. Of several rows of one day,
// the earliest counts. A zero market cap or volume means unknown.
func ParsePriceCSV(r io.Reader, id string) ([]app.PricePoint, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // the header sets it: every row has as many fields
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("price csv %s: %w", id, err)
	}
	if strings.Join(head, ",") != "snapped_at,price,market_cap,total_volume" {
		return nil, fmt.Errorf("price csv %s: header %q is not snapped_at,price,market_cap,total_volume", id, strings.Join(head, ","))
	}
	var out []app.PricePoint
	day := map[time.Time]int{} // a day's index in out
	var taken []time.Time      // the snapshot time of out's rows
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("price csv %s: %w", id, err)
		}
		if len(out) == MaxCSVRows {
			return nil, fmt.Errorf("price csv %s: more than %d rows", id, MaxCSVRows)
		}
		p, snapped, err := csvPoint(rec, id)
		if err != nil {
			return nil, fmt.Errorf("price csv %s line %d: %w", id, line, err)
		}
		if i, ok := day[p.Time]; ok {
			if !snapped.Before(taken[i]) {
				continue
			}
			out[i], taken[i] = p, snapped
			continue
		}
		day[p.Time] = len(out)
		out, taken = append(out, p), append(taken, snapped)
	}
}

// csvPoint is a row's daily point (at its UTC day's midnight) and the row's snapshot time.
func csvPoint(rec []string, id string) (app.PricePoint, time.Time, error) {
	t, err := time.Parse("2006-01-02 15:04:05 MST", rec[0])
	if err != nil {
		if t, err = time.Parse(time.RFC3339, rec[0]); err != nil {
			return app.PricePoint{}, time.Time{}, fmt.Errorf("snapped_at %q is not a time", rec[0])
		}
	}
	t = t.UTC()
	price, err := strconv.ParseFloat(rec[1], 64)
	if err != nil || !(price > 0) || math.IsInf(price, 0) { // !(> 0) refuses NaN too
		return app.PricePoint{}, time.Time{}, fmt.Errorf("price %q is not a positive number", rec[1])
	}
	return app.PricePoint{PricingID: id, Granularity: app.Daily, Time: t.Truncate(24 * time.Hour), Price: price,
		MarketCap: optional(rec[2]), Volume: optional(rec[3])}, t, nil
}

func optional(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	return &v
}
