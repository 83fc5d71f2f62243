package stack_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/dev/stack"
	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
	"github.com/chainintel/chainintel/libs/redisx"
)

// TestStatus runs the stack on a Redis of its own, reads the status of every service through
// the state file the stack writes (as `chainintel status` does): all healthy. Then it stops
// that Redis: every service whose health depends on Redis is named unhealthy, with the reason,
// and the others stay healthy.
func TestStatus(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "status")
	if err != nil {
		t.Skipf("no PostgreSQL: %v", err)
	}
	defer drop()
	rds, err := redisx.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	redisStopped := false
	defer func() {
		if !redisStopped {
			rds.Close()
		}
	}()
	st, err := stack.Start(ctx, stack.Options{HTTPAddr: "127.0.0.1:0", DatabaseURL: dbURL, RedisURL: rds.URL(), LogOutput: io.Discard},
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		<-st.Done()
	}()
	state := filepath.Join(t.TempDir(), "stack.json")
	if err := st.WriteState(state); err != nil {
		t.Fatal(err)
	}
	read, err := stack.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second}

	all := stack.Collect(ctx, client, read.Services)
	if len(all) != len(st.Services) {
		t.Fatalf("%d services in the status, want %d", len(all), len(st.Services))
	}
	var withRedis, withConsumers []string
	for _, s := range all {
		if s.Status.Kafka != nil && s.Status.Kafka.Consumers > 0 {
			withConsumers = append(withConsumers, s.Name)
		}
		if !s.Healthy {
			t.Errorf("%s unhealthy in a running stack: %s", s.Name, s.Problem)
		}
		if s.Name == "balances" && !slices.ContainsFunc(s.Backlog, func(b string) bool { return strings.HasPrefix(b, "balances.apply ") }) {
			t.Errorf("balances' backlog does not show its applier: %q", s.Backlog)
		}
		if slices.Contains(s.Status.Checks, "redis") {
			withRedis = append(withRedis, s.Name)
		}
	}
	if len(withRedis) == 0 {
		t.Fatal("no service's health depends on Redis; this test needs one")
	}
	// The consumers' view of the brokers is in /status, and the embedded broker is reachable.
	if len(withConsumers) == 0 {
		t.Error("no service's /status shows its Kafka consumers")
	}
	// stream-fanout's alerts consumer is built once the alerts are loaded, and counted before.
	if !slices.Contains(withConsumers, "stream-fanout") {
		t.Errorf("stream-fanout's /status does not count its alerts consumer (services with consumers: %v)", withConsumers)
	}
	var out bytes.Buffer
	stack.Print(&out, all)
	if strings.Contains(out.String(), "UNHEALTHY") || strings.Contains(out.String(), "UNREACHABLE") {
		t.Errorf("status of a healthy stack:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "\tKAFKA\t") && !strings.Contains(out.String(), "  KAFKA  ") {
		t.Errorf("no KAFKA column:\n%s", out.String())
	}

	rds.Close()
	redisStopped = true
	all = waitForUnhealthy(t, ctx, client, read.Services, withRedis)
	out.Reset()
	stack.Print(&out, all)
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		named := strings.HasPrefix(f[1], "UNHEALTHY:") && strings.Contains(line, "redis")
		if slices.Contains(withRedis, f[0]) && !named {
			t.Errorf("%s not named unhealthy because of redis: %q", f[0], line)
		}
	}
	t.Logf("after stopping Redis:\n%s", out.String())
}

// waitForUnhealthy polls the status until exactly want are unhealthy (health answers the
// dependency's state at each probe), failing after 30s.
func waitForUnhealthy(t *testing.T, ctx context.Context, c *http.Client, services map[string]stack.Endpoint, want []string) []stack.ServiceStatus {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		all := stack.Collect(ctx, c, services)
		var unhealthy []string
		for _, s := range all {
			if !s.Healthy {
				unhealthy = append(unhealthy, s.Name)
			}
		}
		if slices.Equal(unhealthy, want) {
			return all
		}
		if time.Now().After(deadline) {
			var out bytes.Buffer
			stack.Print(&out, all)
			t.Fatalf("unhealthy %v, want exactly the services that check Redis %v:\n%s", unhealthy, want, out.String())
		}
	}
}
