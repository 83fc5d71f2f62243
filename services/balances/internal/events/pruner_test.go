package events_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/services/balances/internal/events"
	"github.com/chainintel/chainintel/services/balances/internal/store"
)

// passes answers the Pruner's passes in turn, then blocks until the context ends.
type passes struct {
	results []store.PruneResult
	errs    []error
	asked   chan [2]int64 // retention (ns) and pages of each pass
}

func (p *passes) PrunePass(ctx context.Context, retention time.Duration, pages int64) (store.PruneResult, error) {
	p.asked <- [2]int64{int64(retention), pages}
	if len(p.results) == 0 {
		<-ctx.Done()
		return store.PruneResult{}, ctx.Err()
	}
	r, err := p.results[0], p.errs[0]
	p.results, p.errs = p.results[1:], p.errs[1:]
	return r, err
}

// The pruner runs a pass at once and one every interval with its settings, reports what each
// deleted (a failed pass too, and goes on), and returns nil when its context ends mid-pass.
func TestPrunerPassesReportsAndStops(t *testing.T) {
	st := &passes{
		results: []store.PruneResult{{Pruned: 7}, {Pruned: 2}, {}},
		errs:    []error{nil, errors.New("connection lost"), nil},
		asked:   make(chan [2]int64, 8),
	}
	reported := make(chan int64, 8)
	p := events.Pruner{Store: st, Log: slog.New(slog.DiscardHandler), Retention: 72 * time.Hour, Pages: 256, Interval: time.Millisecond,
		Pruned: func(_ context.Context, n int64) { reported <- n }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	for range 4 { // three answered passes and the one left waiting
		if got := <-st.asked; got != [2]int64{int64(72 * time.Hour), 256} {
			t.Fatalf("pass asked with %v", got)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	close(reported)
	var got []int64
	for n := range reported {
		got = append(got, n)
	}
	if len(got) != 2 || got[0] != 7 || got[1] != 2 {
		t.Fatalf("reported %v, want [7 2]", got)
	}
}

// A pass another replica's pass kept from running is logged at debug only, and counts nothing.
func TestPrunerSkippedPassLogsDebug(t *testing.T) {
	st := &passes{results: []store.PruneResult{{Skipped: true}}, errs: []error{nil}, asked: make(chan [2]int64, 8)}
	var logs bytes.Buffer
	reported := 0
	p := events.Pruner{Store: st, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Retention: time.Hour, Pages: 1, Interval: time.Millisecond, Pruned: func(context.Context, int64) { reported++ }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	<-st.asked
	<-st.asked // the skipped pass is logged before the next is asked
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(logs.String()); !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "skipped") || strings.Contains(got, "\n") || reported != 0 {
		t.Fatalf("logged %q, reported %d; want one debug line and nothing reported", got, reported)
	}
}
