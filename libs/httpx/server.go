package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Request size limits of every chainintel listener: a request target (path and query) over
// MaxRequestTarget bytes gets 414, header fields over MaxHeaderBytes together get 431, both in
// the API's JSON error shape. The server itself reads up to serverHeaderCap (1 MiB) of request
// line and headers, so requests up to 16 times over those limits are refused here in JSON; past
// that cap net/http closes the connection with its own plain-text 431 (it has no hook for it).
const (
	MaxRequestTarget = 64 << 10
	MaxHeaderBytes   = 64 << 10
	serverHeaderCap  = 1 << 20
)

// NewServer returns an http.Server with the timeouts and request size limits every chainintel
// listener uses.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           requestLimits(h),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    serverHeaderCap,
	}
}

func requestLimits(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.RequestURI) > MaxRequestTarget {
			writeError(w, http.StatusRequestURITooLong, fmt.Sprintf("request target (path and query) over %d bytes", MaxRequestTarget))
			return
		}
		n := 0
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4 // "k: v\r\n"
			}
		}
		if n > MaxHeaderBytes {
			writeError(w, http.StatusRequestHeaderFieldsTooLarge, fmt.Sprintf("request header fields over %d bytes", MaxHeaderBytes))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: msg})
}

// ServerPart serves srv on ln as a lifecycle part. Stopping it stops accepting connections and
// waits for requests in flight to finish (until the shutdown deadline).
func ServerPart(name string, ln net.Listener, srv *http.Server) lifecycle.Part {
	return lifecycle.Part{
		Name: name,
		Run: func(context.Context) error {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
		Stop: func(ctx context.Context) error {
			err := srv.Shutdown(ctx)
			if err != nil {
				_ = srv.Close()
			}
			// Serve closes ln when it returns; a server stopped before it served (a runner
			// stopped without running) closes it here.
			_ = ln.Close()
			return err
		},
	}
}

// Readiness tracks whether a service should receive traffic: it has started, it is not stopping,
// and its own checks pass. Dependencies every replica shares (PostgreSQL, Redis) are checked too,
// but only for health reports (Health, /status), not for traffic (Check, /readyz): an outage of
// a shared dependency fails every replica at once, and failing their readiness would only empty
// the Service, so clients would get the ingress's or the edge's bare error instead of the
// service's own JSON 503 with Retry-After (or, at the edge, keys answered from its cache). It is
// safe for concurrent use.
type Readiness struct {
	started  atomic.Bool
	stopping atomic.Bool

	mu     sync.Mutex
	checks []readinessCheck
}

type readinessCheck struct {
	name       string
	fn         func(context.Context) error
	dependency bool
}

// AddCheck registers a check of the instance itself (a read model loaded), run on every
// readiness probe.
func (r *Readiness) AddCheck(name string, fn func(context.Context) error) {
	r.add(readinessCheck{name, fn, false})
}

// AddDependency registers a check of a dependency every replica shares, run by Health only.
func (r *Readiness) AddDependency(name string, fn func(context.Context) error) {
	r.add(readinessCheck{name, fn, true})
}

func (r *Readiness) add(c readinessCheck) {
	r.mu.Lock()
	r.checks = append(r.checks, c)
	r.mu.Unlock()
}

// CheckNames lists the registered checks and dependencies.
func (r *Readiness) CheckNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.checks))
	for _, c := range r.checks {
		names = append(names, c.name)
	}
	return names
}

// MarkStarted is called once the service has finished starting.
func (r *Readiness) MarkStarted() { r.started.Store(true) }

// MarkStopping makes readiness fail so load balancers drain the instance before it stops.
func (r *Readiness) MarkStopping() { r.stopping.Store(true) }

// Check returns nil when the service should receive traffic, or why not: dependencies are not
// asked.
func (r *Readiness) Check(ctx context.Context) error { return r.run(ctx, false) }

// Health returns nil when the service is ready and every dependency answers, or why not.
func (r *Readiness) Health(ctx context.Context) error { return r.run(ctx, true) }

func (r *Readiness) run(ctx context.Context, dependencies bool) error {
	if r.stopping.Load() {
		return errors.New("stopping")
	}
	if !r.started.Load() {
		return errors.New("starting")
	}
	r.mu.Lock()
	checks := append([]readinessCheck(nil), r.checks...)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, c := range checks {
		if c.dependency && !dependencies {
			continue
		}
		if err := c.fn(ctx); err != nil {
			return errors.New(c.name + ": " + err.Error())
		}
	}
	return nil
}

// OpsHandler serves the ops port: /livez, /readyz, /startupz, /metrics and /debug/pprof/.
func OpsHandler(reg *prometheus.Registry, ready *Readiness) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /startupz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.started.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := ready.Check(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
