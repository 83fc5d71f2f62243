package service

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
)

// Status is what the ops port's GET /status answers: the service's readiness and the last
// error it logged. `chainintel status` reads it from every service.
type Status struct {
	Service string `json:"service"`
	Ready   bool   `json:"ready"`
	// NotReady is why readiness fails ("postgres: ...", "starting"); empty when ready.
	NotReady string `json:"notReady,omitempty"`
	// Checks are the names of the dependency checks readiness runs.
	Checks    []string   `json:"checks"`
	LastError *LastError `json:"lastError,omitempty"`
}

// LastError is the newest error-level log record of a service.
type LastError struct {
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Error   string    `json:"error,omitempty"`
}

// lastErrorHandler passes records on and remembers the newest at error level.
type lastErrorHandler struct {
	slog.Handler
	last *lastErrorBox
}

type lastErrorBox struct {
	mu sync.Mutex
	e  *LastError
}

func (h lastErrorHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		le := &LastError{Time: r.Time.UTC(), Message: r.Message}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "error" || a.Key == "err" {
				le.Error = a.Value.String()
				return false
			}
			return true
		})
		h.last.mu.Lock()
		h.last.e = le
		h.last.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h lastErrorHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return lastErrorHandler{h.Handler.WithAttrs(as), h.last}
}

func (h lastErrorHandler) WithGroup(name string) slog.Handler {
	return lastErrorHandler{h.Handler.WithGroup(name), h.last}
}

func (b *lastErrorBox) get() *LastError {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.e
}

// opsHandler is the shared ops port with GET /status added.
func opsHandler(s *Service, box *lastErrorBox) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", httpx.OpsHandler(s.Tel.Registry, s.Ready))
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		st := Status{Service: s.Name, Checks: s.Ready.CheckNames(), LastError: box.get()}
		if err := s.Ready.Check(r.Context()); err != nil {
			st.NotReady = err.Error()
		} else {
			st.Ready = true
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	return mux
}
