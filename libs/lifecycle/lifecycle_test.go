package lifecycle

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestStopsInReverseOrder(t *testing.T) {
	var mu sync.Mutex
	var order []string
	rec := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Minute) // a hang guard: a part stopping late is no failure of these tests
	r.OnStop("pool", func(context.Context) error { rec("pool"); return nil })
	r.Add(Part{Name: "consumer", Run: func(ctx context.Context) error {
		<-ctx.Done()
		rec("consumer")
		return ctx.Err()
	}})
	stopHTTP := make(chan struct{})
	r.Add(Part{Name: "http",
		Run:  func(ctx context.Context) error { <-stopHTTP; return nil },
		Stop: func(context.Context) error { rec("http"); close(stopHTTP); return nil },
	})
	r.OnStop("readiness", func(context.Context) error { rec("readiness"); return nil })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	// The parts' contexts do not derive from ctx, so the order holds even when the stop comes
	// before a part has started.
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"readiness", "http", "consumer", "pool"}
	if !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

func TestPartFailureStopsTheRest(t *testing.T) {
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Minute) // a hang guard: a part stopping late is no failure of these tests
	var stopped bool
	r.Add(Part{Name: "other", Run: func(ctx context.Context) error { <-ctx.Done(); stopped = true; return nil }})
	boom := errors.New("boom")
	r.Add(Part{Name: "bad", Run: func(ctx context.Context) error { return boom }})
	err := r.Run(context.Background())
	if !errors.Is(err, boom) || !stopped {
		t.Fatalf("err=%v stopped=%v", err, stopped)
	}
}
