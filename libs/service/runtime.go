package service

import (
	"errors"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// TuneRuntime sets the Go runtime's memory targets for a service process:
//
//   - the soft memory limit (GOMEMLIMIT) at 90% of the container's memory limit (its cgroup),
//     unless GOMEMLIMIT is set: near the limit the collector works harder, instead of the pod
//     being killed for memory;
//   - the collector's heap growth (GOGC) at gcPercent, when gcPercent > 0 and GOGC is not set.
//     A service whose heap is mostly a cache collects less often: fewer collections running
//     beside requests on its cores, and fewer allocations made to assist them. The memory limit
//     still bounds the heap.
func TuneRuntime(log *slog.Logger, gcPercent int) {
	if _, err := memlimit.Set(memlimit.WithProvider(memlimit.FromCgroup), memlimit.WithLogger(log)); err != nil &&
		!errors.Is(err, memlimit.ErrNoCgroup) {
		log.Warn("memory limit not read; GOMEMLIMIT left as it is", "err", err)
	}
	if gcPercent > 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
