package service

import (
	"log/slog"
	"runtime/debug"
	"testing"
)

// TuneRuntime sets GOGC from the service unless the environment names one, and leaves a
// GOMEMLIMIT the environment sets alone.
func TestTuneRuntime(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	prevGC := debug.SetGCPercent(100)
	prevMem := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevMem) })

	t.Setenv("GOMEMLIMIT", "3GiB") // the runtime read it at start; Set must not replace it
	debug.SetMemoryLimit(3 << 30)
	t.Setenv("GOGC", "")
	TuneRuntime(log, 400)
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("GOGC unset: GC percent %d, want the service's 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Fatalf("GOMEMLIMIT set: memory limit %d, want it left at %d", got, 3<<30)
	}

	t.Setenv("GOGC", "150") // the runtime applied it at start; the service must not override it
	debug.SetGCPercent(150)
	TuneRuntime(log, 400)
	if got := debug.SetGCPercent(100); got != 150 {
		t.Fatalf("GOGC=150 in the environment: GC percent %d, want 150", got)
	}

	t.Setenv("GOGC", "")
	debug.SetGCPercent(100)
	TuneRuntime(log, 0)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("no service setting: GC percent %d, want the default 100", got)
	}
}
