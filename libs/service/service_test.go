package service

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/telemetry"
)

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// A request in flight when the stop signal arrives completes, and readiness fails first.
func TestGracefulShutdownFinishesRequestInFlight(t *testing.T) {
	httpLn, opsLn := listen(t), listen(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(context.Background(), "test", Base{ShutdownTimeout: 10 * time.Second, InternalSecret: "0123456789abcdef"},
		Deps{Logger: log, Telemetry: telemetry.Nop("test"), HTTPListener: httpLn, OpsListener: opsLn})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = w.Write([]byte("done"))
	})

	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(ctx, mux) }()

	opsURL := "http://" + opsLn.Addr().String()
	waitStatus(t, opsURL+"/readyz", 200)

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + httpLn.Addr().String() + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- result{body: string(b)}
	}()
	<-entered
	cancel() // the stop signal, while /slow is in flight
	waitStatus(t, opsURL+"/readyz", 503)
	close(release)

	r := <-got
	if r.err != nil || r.body != "done" {
		t.Fatalf("request in flight was cut: body %q err %v", r.body, r.err)
	}
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("service did not stop")
	}
	if _, err := http.Get("http://" + httpLn.Addr().String() + "/slow"); err == nil {
		t.Fatal("server still accepting after stop")
	}
}

func waitStatus(t *testing.T, url string, status int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never answered %d", url, status)
}

type testConfig struct {
	Base
	Name string
}

func TestBinaryDispatch(t *testing.T) {
	var got []string
	b := Binary[testConfig]{
		Name: "t",
		Load: func() (testConfig, error) { return testConfig{Name: "x"}, nil },
		Run: func(_ context.Context, c testConfig, d Deps) error {
			got = append(got, "serve:"+c.Name)
			if d.Logger == nil {
				t.Error("no logger")
			}
			return nil
		},
		Migrate: func(context.Context, testConfig, *slog.Logger) error { got = append(got, "migrate"); return nil },
		Extra: map[string]Command[testConfig]{
			"admin": func(_ context.Context, _ testConfig, _ *slog.Logger, args []string) error {
				got = append(got, "admin:"+args[0])
				return nil
			},
		},
	}
	ctx := context.Background()
	for _, args := range [][]string{nil, {"serve"}, {"migrate"}, {"admin", "list"}} {
		if err := b.Dispatch(ctx, args); err != nil {
			t.Fatal(err)
		}
	}
	want := "serve:x serve:x migrate admin:list"
	if s := fmt.Sprint(got); s != "["+want+"]" {
		t.Fatalf("got %v want %s", got, want)
	}
	if err := b.Dispatch(ctx, []string{"nope"}); err == nil || err.Error() != `unknown command "nope" (want serve, migrate, admin)` {
		t.Fatalf("unknown command: %v", err)
	}
}

func TestBaseValidateRefusesOTLPEndpointWithoutScheme(t *testing.T) {
	b := Base{ShutdownTimeout: time.Second, InternalSecret: "0123456789abcdef"}
	if err := b.Validate(); err != nil {
		t.Fatalf("valid base: %v", err)
	}
	b.Telemetry.OTLPEndpoint = "otel-collector:4317"
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "OTLP_ENDPOINT") {
		t.Fatalf("Validate with otel-collector:4317 = %v, want an error naming OTLP_ENDPOINT", err)
	}
}
