package redisx_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/telemetry/logtest"
)

// go-redis holds one logger per process (Connect sets it once), so every run of the test in a
// process shares this one and reads what its own outage added.
var (
	goRedisOut logtest.Buffer
	goRedisLog = slog.New(slog.NewJSONHandler(&goRedisOut, nil))
)

// During an outage go-redis reports its dial failures through the service's JSON logger: every
// line it writes is one JSON object.
func TestGoRedisLogsAreJSON(t *testing.T) {
	m := miniredis.RunT(t)
	before := len(goRedisOut.String())
	out := func() string { return goRedisOut.String()[before:] }
	c, err := redisx.Connect(context.Background(), "redis://"+m.Addr()+"/0", redisx.WithLogger(goRedisLog))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m.Close() // Redis goes away
	for i := 0; i < 3 && !strings.Contains(out(), "failed to dial"); i++ {
		if err := c.Get(context.Background(), "k").Err(); err == nil {
			t.Fatal("a command succeeded with Redis stopped")
		}
	}
	lines := strings.Split(strings.TrimSpace(out()), "\n")
	for _, l := range lines {
		var v struct{ Msg, Detail string }
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Msg != "redis client" {
			t.Fatalf("not a JSON line of the logger: %q (%v)", l, err)
		}
	}
	if !strings.Contains(out(), "failed to dial") {
		t.Fatalf("go-redis's dial failure is not in the JSON log: %q", out())
	}
}
