package app

import (
	"context"
	"testing"
	"time"
)

// windowsStore answers TopParts and TopWindows with fixed rows and counts the calls.
type windowsStore struct {
	Store
	calls, windowCalls int
	parts              []TokenParts
}

// KnownIDs: every id the tests ask for is in the registry.
func (w *windowsStore) KnownIDs(_ context.Context, ids []string) ([]string, error) { return ids, nil }

func (w *windowsStore) TopParts(context.Context, []string, time.Time, time.Time, time.Time) ([]TokenParts, error) {
	w.calls++
	return w.parts, nil
}

func (w *windowsStore) TopWindows(context.Context, []string, []string, time.Time, time.Time, time.Time) ([]TokenWindows, error) {
	w.windowCalls++
	return nil, nil
}

// parts is a priced token's figures (an unpriced one is never a row).
func parts(id string, cs ...ChainFlows) TokenParts {
	price := 1.0
	t := TokenParts{TokenWindows: TokenWindows{PricingID: id, Price: &price}, Parts: cs}
	for _, c := range cs {
		t.Current, t.Previous = t.Current.Add(c.Current), t.Previous.Add(c.Previous)
	}
	return t
}

func TestTopSnapshot(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	// u has the most volume but no price: no view of the snapshot ranks it (every Total below
	// counts a and b alone).
	unpriced := parts("u", ChainFlows{Chain: "base", Current: HourFlows{Volume: 9, Transfers: 1}}, ChainFlows{Chain: "ethereum", Current: HourFlows{Volume: 9, Transfers: 1}})
	unpriced.Price = nil
	st := &windowsStore{parts: []TokenParts{
		parts("a", ChainFlows{Chain: "base", Current: HourFlows{Volume: 4, Transfers: 1}}, ChainFlows{Chain: "ethereum", Current: HourFlows{Volume: 1, Transfers: 1}}),
		parts("b", ChainFlows{Chain: "ethereum", Current: HourFlows{Volume: 2, Transfers: 1}}),
		unpriced,
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
	if err != nil || st.calls != 9 || res.Total != 2 || res.Tokens[0].Token.ID != "a" || res.Tokens[0].Current.Volume != 5 {
		t.Fatalf("from the snapshot: %+v %v (%d calls)", res, err, st.calls)
	}
	// Requests narrowed to chains or pricing ids are answered from the snapshot's per-chain parts.
	q.Chains = []string{"ethereum"}
	res, err = s.Top(context.Background(), q)
	if err != nil || st.calls != 9 || st.windowCalls != 0 || res.Total != 2 || res.Tokens[0].Token.ID != "b" || res.Tokens[1].Current.Volume != 1 {
		t.Fatalf("chains: %+v %v (%d calls)", res, err, st.calls)
	}
	q.Chains, q.TokenIDs = []string{"base"}, []string{"b", "a", "u"}
	res, err = s.Top(context.Background(), q)
	if err != nil || st.calls != 9 || res.Total != 1 || res.Tokens[0].Current.Volume != 4 {
		t.Fatalf("chains and ids: %+v %v (%d calls)", res, err, st.calls)
	}
	// Other reference periods: unfiltered fills a snapshot, narrowed goes to the store.
	q.Chains, q.TokenIDs, q.ReferencePeriods = nil, nil, 3
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 10 {
		t.Fatalf("3 periods: %v (%d calls)", err, st.calls)
	}
	q.ReferencePeriods = 4
	q.Chains = []string{"ethereum"}
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 10 || st.windowCalls != 1 {
		t.Fatalf("4 periods, narrowed: %v (%d, %d calls)", err, st.calls, st.windowCalls)
	}
	// A snapshot older than two refresh intervals is not used.
	now = now.Add(61 * time.Second)
	q.Chains, q.ReferencePeriods = nil, 1
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 11 {
		t.Fatalf("stale: %v (%d calls)", err, st.calls)
	}
	// The next hour's window is another snapshot.
	now = now.Add(time.Hour)
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != 12 {
		t.Fatalf("next hour: %v (%d calls)", err, st.calls)
	}
}

// A refresh that finds no token (a fresh install, before the token list and the first flows)
// keeps no snapshot: the next request reads the store and sees the tokens that arrived since,
// without waiting for the next refresh.
func TestTopSnapshotNotKeptEmpty(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	st := &windowsStore{}
	s := New(st, Options{Now: func() time.Time { return now }, TopRefresh: time.Hour})
	if err := s.RefreshTop(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := TopQuery{Timeframe: 24 * time.Hour, OrderBy: "volume", Desc: true, Size: 10, ReferencePeriods: 1}
	if res, err := s.Top(context.Background(), q); err != nil || res.Total != 0 {
		t.Fatalf("empty registry: %+v %v", res, err)
	}
	st.parts = []TokenParts{parts("a", ChainFlows{Chain: "ethereum", Current: HourFlows{Volume: 3, Transfers: 1}})}
	res, err := s.Top(context.Background(), q)
	if err != nil || res.Total != 1 || res.Tokens[0].Token.ID != "a" {
		t.Fatalf("after the first token: %+v %v", res, err)
	}
	// Once there are tokens, the snapshot is kept as before.
	calls := st.calls
	if _, err := s.Top(context.Background(), q); err != nil || st.calls != calls {
		t.Fatalf("kept: %v (%d calls, want %d)", err, st.calls, calls)
	}
}
