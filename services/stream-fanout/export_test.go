package streamfanout

import (
	"testing"
	"time"
)

// SetClock makes the replicas started after it read the hub's time from now, until the test ends.
func SetClock(t testing.TB, now func() time.Time) {
	old := hubNow
	hubNow = now
	t.Cleanup(func() { hubNow = old })
}
