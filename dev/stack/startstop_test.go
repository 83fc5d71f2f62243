package stack_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/dev/stack"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
)

// A stop requested while the stack is still starting (Ctrl-C during make run's start) lets every
// service that began stopping finish its graceful stop before Start returns: none is abandoned
// with the broker and Redis closed under it.
func TestStopWhileStarting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "stopstarting")
	if err != nil {
		t.Skipf("no PostgreSQL: %v", err)
	}
	defer drop()
	var logs logtest.Buffer
	// Cancel once the first service asked to stop can be seen starting: the services run, the
	// stack is not ready yet (readiness is polled after every service was launched).
	go func() {
		for !strings.Contains(logs.String(), `"service started"`) && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	st, err := stack.Start(ctx, stack.Options{HTTPAddr: "127.0.0.1:0", DatabaseURL: dbURL, LogOutput: &logs, LogLevel: "info"},
		slog.New(slog.DiscardHandler))
	if err == nil {
		// Ready before the cancel landed: nothing to check on this run.
		<-st.Done()
		t.Skip("the stack was ready before the stop")
	}
	out := logs.String()
	asked, stopped := strings.Count(out, `"shutdown requested"`), strings.Count(out, `"service stopped"`)
	if asked == 0 || stopped < asked {
		t.Fatalf("%d services asked to stop, %d stopped before Start returned (%v)", asked, stopped, err)
	}
}
