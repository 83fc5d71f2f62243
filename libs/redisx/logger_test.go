package redisx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/chainintel/chainintel/libs/redisx"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// During an outage go-redis reports its dial failures through the service's JSON logger: every
// line it writes is one JSON object.
func TestGoRedisLogsAreJSON(t *testing.T) {
	m := miniredis.RunT(t)
	var out syncBuffer
	log := slog.New(slog.NewJSONHandler(&out, nil))
	c, err := redisx.Connect(context.Background(), "redis://"+m.Addr()+"/0", redisx.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m.Close() // Redis goes away
	for i := 0; i < 3 && !strings.Contains(out.String(), "failed to dial"); i++ {
		if err := c.Get(context.Background(), "k").Err(); err == nil {
			t.Fatal("a command succeeded with Redis stopped")
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines {
		var v struct{ Msg, Detail string }
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Msg != "redis client" {
			t.Fatalf("not a JSON line of the logger: %q (%v)", l, err)
		}
	}
	if !strings.Contains(out.String(), "failed to dial") {
		t.Fatalf("go-redis's dial failure is not in the JSON log: %q", out.String())
	}
}
