package service

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/telemetry"
)

// GET /status on the ops port answers readiness with its reason, the checks' names, and the
// newest error the service logged (through loggers derived with With as well).
func TestOpsStatus(t *testing.T) {
	httpLn, opsLn := listen(t), listen(t)
	s, err := New(context.Background(), "svc", Base{ShutdownTimeout: 10 * time.Second, InternalSecret: "0123456789abcdef"},
		Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: telemetry.Nop("svc"), HTTPListener: httpLn, OpsListener: opsLn})
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	s.Ready.AddCheck("postgres", func(context.Context) error {
		if down.Load() {
			return errors.New("connection refused")
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, http.NotFoundHandler()) }()
	defer func() { cancel(); <-done }()
	url := "http://" + opsLn.Addr().String()
	waitStatus(t, url+"/readyz", 200)

	get := func() Status {
		resp, err := http.Get(url + "/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := get()
	if !st.Ready || st.NotReady != "" || st.Service != "svc" || len(st.Checks) != 1 || st.Checks[0] != "postgres" || st.LastError != nil {
		t.Fatalf("healthy status: %+v", st)
	}
	s.Log.With("part", "worker").Error("flush failed", "error", errors.New("disk full"))
	s.Log.Warn("not an error")
	down.Store(true)
	st = get()
	if st.Ready || st.NotReady != "postgres: connection refused" {
		t.Errorf("not ready: %+v", st)
	}
	if st.LastError == nil || st.LastError.Message != "flush failed" || st.LastError.Error != "disk full" || st.LastError.Time.IsZero() {
		t.Errorf("last error: %+v", st.LastError)
	}
}
