package app

import (
	"context"
	"testing"
	"time"
)

// windowsStore answers TopWindows with fixed rows and counts the calls.
type windowsStore struct {
	Store
	calls int
	rows  []TokenWindows
}

func (w *windowsStore) TopWindows(context.Context, []string, []string, time.Time, time.Time, time.Time) ([]TokenWindows, error) {
	w.calls++
	return w.rows, nil
}

func TestTopSnapshot(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	st := &windowsStore{rows: []TokenWindows{
		{PricingID: "a", Current: HourFlows{Volume: 1}},
		{PricingID: "b", Current: HourFlows{Volume: 2}},
	}}
	s := New(st, Options{Now: func() time.Time { return now }, TopRefresh: 30 * time.Second})
	if err := s.RefreshTop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 5 timeframes with 1 and auto periods; 7d's auto is 1.
	if st.calls != 9 {
		t.Fatalf("refresh made %d store calls, want 9", st.calls)
	}
	q := TopQuery{Timeframe: 24 * time.Hour, OrderBy: "volume", Desc: true, Size: 10, ReferencePeriods: 1}
	res, err := s.Top(context.Background(), q)
	if err != nil || st.calls != 9 || res.Total != 2 || res.Tokens[0].Token.ID != "b" {
		t.Fatalf("from the snapshot: %+v %v (%d calls)", res, err, st.calls)
	}
	// Filtered requests and other reference periods go to the store.
	q.Chains = []string{"ethereum"}
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 10 {
		t.Fatalf("filtered: %v (%d calls)", err, st.calls)
	}
	q.Chains, q.ReferencePeriods = nil, 3
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 11 {
		t.Fatalf("3 periods: %v (%d calls)", err, st.calls)
	}
	// A snapshot older than two refresh intervals is not used.
	now = now.Add(61 * time.Second)
	q.ReferencePeriods = 1
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 12 {
		t.Fatalf("stale: %v (%d calls)", err, st.calls)
	}
	// The next hour's window is another snapshot.
	now = now.Add(time.Hour)
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 13 {
		t.Fatalf("next hour: %v (%d calls)", err, st.calls)
	}
}
