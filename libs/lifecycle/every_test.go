package lifecycle

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// Every calls its function at each tick and returns once the context ends; Sleep says whether
// it slept the whole duration.
func TestEveryAndSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- Every(ctx, time.Millisecond, func(context.Context) {
			if n.Add(1) == 3 {
				cancel()
			}
		})
	}()
	select {
	case err := <-done:
		if err != nil || n.Load() < 3 {
			t.Fatalf("Every returned %v after %d calls", err, n.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep of a live context: false")
	}
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep of an ended context: true")
	}
}
