package telemetry

import (
	"strings"
	"testing"
	"time"
)

// Durations are written as Go writes them, not as nanoseconds.
func TestLoggerWritesDurationsAsText(t *testing.T) {
	var b strings.Builder
	NewLogger(&b, "svc", "info").Info("waiting", "retry_in", 1500*time.Millisecond)
	if !strings.Contains(b.String(), `"retry_in":"1.5s"`) {
		t.Errorf("log line %s", b.String())
	}
}
