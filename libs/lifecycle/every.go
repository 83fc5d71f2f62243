package lifecycle

import (
	"context"
	"time"
)

// Every calls fn every interval until ctx ends (the first call one interval after the start)
// and returns nil. fn handles its own failures: a periodic task logs and retries at the next
// tick rather than stopping its service.
func Every(ctx context.Context, interval time.Duration, fn func(context.Context)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			fn(ctx)
		}
	}
}

// Sleep waits d or until ctx ends; it reports whether d elapsed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
