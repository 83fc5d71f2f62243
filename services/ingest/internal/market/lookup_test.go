package market

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	taclient "github.com/chainintel/chainintel/services/token-analytics/client"
)

type fakeSource struct {
	calls [][]string
	from  []time.Time
	pts   map[string][]taclient.PricePoint
	err   error
}

func (f *fakeSource) PriceWindow(_ context.Context, ids []string, from, _ time.Time) (map[string][]taclient.PricePoint, error) {
	if len(ids) > 0 {
		f.calls = append(f.calls, append([]string(nil), ids...))
		f.from = append(f.from, from)
	}
	return f.pts, f.err
}

// Fill reads a day's window (from MaxAge before the day) once per pricing id and day, only for
// ids the book has no point of the day at or before the time for (a point of an earlier day may
// be in force while the source has a newer one); an id the source has no points of stays
// unpriced and is not asked again that day; a failed call is returned and the day asked again
// next time.
func TestFillOncePerIDAndDay(t *testing.T) {
	d1 := time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC)
	src := &fakeSource{pts: map[string][]taclient.PricePoint{"ethereum": {{TimeMs: d1.Add(-24 * time.Hour).UnixMilli(), Price: 1400}, {TimeMs: d1.UnixMilli(), Price: 1500}}}}
	m := New()
	m.AddPrice("fresh", d1, 1)
	if n, err := m.Fill(context.Background(), []Want{{ID: "ethereum", At: d1.Add(time.Hour)}}); n != 0 || err != nil {
		t.Fatalf("without a source: %d %v", n, err)
	}
	m.SetSource(src)
	var wants []Want
	for i := range 100 {
		at := d1.Add(time.Duration(i) * 10 * time.Minute)
		wants = append(wants, Want{"ethereum", at}, Want{"gone", at}, Want{"fresh", at}, Want{"", at})
	}
	for range 2 {
		if _, err := m.Fill(context.Background(), wants); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(src.calls, [][]string{{"ethereum", "gone"}}) || !src.from[0].Equal(d1.Add(-MaxAge)) {
		t.Fatalf("calls %v from %v: want one for ethereum and gone from MaxAge before the day", src.calls, src.from)
	}
	if p, ok := m.PriceAt("ethereum", d1.Add(5*time.Hour)); !ok || p != 1500 {
		t.Errorf("ethereum at 05:00: %v %v", p, ok)
	}
	if _, ok := m.PriceAt("gone", d1.Add(5*time.Hour)); ok {
		t.Error("gone priced")
	}
	// The next day: the book's 1500 of the day before would be in force for ethereum, but the
	// source may hold a newer point, so it is asked too.
	next := []Want{{"gone", d1.Add(30 * time.Hour)}, {"ethereum", d1.Add(30 * time.Hour)}}
	src.err = errors.New("token-analytics is unavailable")
	if n, err := m.Fill(context.Background(), next); n != 1 || !errors.Is(err, src.err) {
		t.Fatalf("failed call: %d %v", n, err)
	}
	src.err = nil
	src.pts["ethereum"] = append(src.pts["ethereum"], taclient.PricePoint{TimeMs: d1.Add(24 * time.Hour).UnixMilli(), Price: 1600})
	for i, want := range []int{1, 0} {
		if n, err := m.Fill(context.Background(), next); n != want || err != nil {
			t.Fatalf("the next day, try %d after a failed call: %d calls %v, want %d", i, n, err, want)
		}
	}
	if p, ok := m.PriceAt("ethereum", d1.Add(30*time.Hour)); !ok || p != 1600 {
		t.Errorf("ethereum the next day: %v %v, want the next day's 1600", p, ok)
	}
	if got := src.calls[len(src.calls)-1]; !reflect.DeepEqual(got, []string{"gone", "ethereum"}) {
		t.Errorf("the next day's call asked %v", got)
	}
}
