package app

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTopFromSnapshot ranks 5,000 tokens from the in-memory snapshot, unfiltered and
// narrowed to a chain or to 100 pricing ids (go test -bench TopFromSnapshot ./internal/app/).
func BenchmarkTopFromSnapshot(b *testing.B) {
	now := time.Date(2026, 1, 10, 12, 30, 0, 0, time.UTC)
	st := &windowsStore{}
	for i := range 5000 {
		v := float64(i*7919%5000 + 1)
		st.parts = append(st.parts, parts(fmt.Sprintf("token-%05d", i),
			ChainFlows{Chain: "base", Current: HourFlows{Volume: v / 3, CexIn: 1, Transfers: 1}, Previous: HourFlows{Volume: v, Transfers: 1}},
			ChainFlows{Chain: "ethereum", Current: HourFlows{Volume: v, DexOut: 2, Transfers: 1}, Previous: HourFlows{Volume: v / 2, Transfers: 1}}))
	}
	s := New(st, Options{Now: func() time.Time { return now }, TopRefresh: time.Hour})
	if err := s.RefreshTop(context.Background()); err != nil {
		b.Fatal(err)
	}
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf("token-%05d", i*37))
	}
	for name, q := range map[string]TopQuery{
		"unfiltered":    {},
		"chains":        {Chains: []string{"ethereum"}},
		"tokenIds(100)": {TokenIDs: ids},
	} {
		q.Timeframe, q.OrderBy, q.Desc, q.Size, q.ReferencePeriods, q.Percent = 24*time.Hour, "netflow", true, 50, 1, true
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if _, err := s.Top(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
