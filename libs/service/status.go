package service

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
)

// Status is what the ops port's GET /status answers: the service's readiness, the last error it
// logged and, for a service that consumes or publishes Kafka, its clients' view of the brokers.
// `chainintel status` reads it from every service.
type Status struct {
	Service string `json:"service"`
	// Ready is the service's health: ready for traffic (/readyz) and every dependency
	// (PostgreSQL, Redis) answering, which /readyz does not ask (httpx.Readiness says why).
	Ready bool `json:"ready"`
	// NotReady is why not ("postgres: ...", "starting"); empty when ready.
	NotReady string `json:"notReady,omitempty"`
	// Checks are the names of the checks and dependencies health runs.
	Checks    []string   `json:"checks"`
	LastError *LastError `json:"lastError,omitempty"`
	// Kafka is informational, never part of readiness: see KafkaStatus.
	Kafka *KafkaStatus `json:"kafka,omitempty"`
}

// KafkaStatus is what a service's consumers and publishers know of the brokers. Readiness does
// not check Kafka on purpose: the consumers wait a broker outage out, the publishers' callers
// retry (an outbox keeps its events), and a readiness or liveness failure would only take every
// replica out of its Service or restart pods that cannot end the outage. They log their broker
// failures at warn or debug level, which LastError does not keep, so this is where /status shows
// them.
type KafkaStatus struct {
	// Consumers is how many consumers the service runs.
	Consumers int `json:"consumers"`
	// Publishers is how many publishers the service made (Service.Publisher).
	Publishers int `json:"publishers,omitempty"`
	// LastError is the consumers' newest failure to reach the brokers (a fetch or a lag read),
	// however old: compare its time with LagReadAt.
	LastError *eventbus.BrokerError `json:"lastError,omitempty"`
	// PublishError is the publishers' newest failure to write to the brokers (op "publish"),
	// however old: compare its time with PublishedAt.
	PublishError *eventbus.BrokerError `json:"publishError,omitempty"`
	// LagReadAt is the oldest of the consumers' last successful lag reads (each reads every
	// 10 s): older than a minute, a consumer cannot reach the brokers. Absent before every
	// consumer read it once.
	LagReadAt *time.Time `json:"lagReadAt,omitempty"`
	// PublishedAt is the newest successful publish of any publisher; absent before the first.
	// A PublishError newer than it means the service cannot publish now.
	PublishedAt *time.Time `json:"publishedAt,omitempty"`
}

// ConsumerView is a consumer as /status sees it (an *eventbus.Consumer of any message type).
type ConsumerView interface {
	LastBrokerError() *eventbus.BrokerError
	LagReadAt() time.Time
}

// publisherView is a publisher as /status sees it (an *eventbus.Publisher).
type publisherView interface {
	LastBrokerError() *eventbus.BrokerError
	PublishedAt() time.Time
}

// consumerList is the consumers Consume added and the publishers Publisher made, read by
// /status while they run.
type consumerList struct {
	mu sync.Mutex
	cs []ConsumerView
	ps []publisherView
}

func (l *consumerList) add(c ConsumerView) {
	l.mu.Lock()
	l.cs = append(l.cs, c)
	l.mu.Unlock()
}

func (l *consumerList) addPublisher(p publisherView) {
	l.mu.Lock()
	l.ps = append(l.ps, p)
	l.mu.Unlock()
}

// lateConsumer stands in /status for a consumer built after the wiring (Service.LateConsumer):
// until it is set, it has no broker error and no lag read (starting).
type lateConsumer struct {
	mu sync.Mutex
	c  ConsumerView
}

func (l *lateConsumer) set(c ConsumerView) {
	l.mu.Lock()
	l.c = c
	l.mu.Unlock()
}

func (l *lateConsumer) get() ConsumerView {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c
}

func (l *lateConsumer) LastBrokerError() *eventbus.BrokerError {
	if c := l.get(); c != nil {
		return c.LastBrokerError()
	}
	return nil
}

func (l *lateConsumer) LagReadAt() time.Time {
	if c := l.get(); c != nil {
		return c.LagReadAt()
	}
	return time.Time{}
}

// status is the consumers' and publishers' KafkaStatus; nil for a service with neither.
func (l *consumerList) status() *KafkaStatus {
	l.mu.Lock()
	cs := append([]ConsumerView(nil), l.cs...)
	ps := append([]publisherView(nil), l.ps...)
	l.mu.Unlock()
	if len(cs) == 0 && len(ps) == 0 {
		return nil
	}
	ks := &KafkaStatus{Consumers: len(cs), Publishers: len(ps)}
	for _, p := range ps {
		ks.PublishError = newer(ks.PublishError, p.LastBrokerError())
		if at := p.PublishedAt(); !at.IsZero() && (ks.PublishedAt == nil || at.After(*ks.PublishedAt)) {
			ks.PublishedAt = &at
		}
	}
	if len(cs) == 0 {
		return ks
	}
	var oldest time.Time
	allRead := true
	for _, c := range cs {
		ks.LastError = newer(ks.LastError, c.LastBrokerError())
		at := c.LagReadAt()
		if at.IsZero() {
			allRead = false
		} else if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	if allRead {
		ks.LagReadAt = &oldest
	}
	return ks
}

// NewestError is the newer of LastError and PublishError; nil when neither.
func (ks *KafkaStatus) NewestError() *eventbus.BrokerError {
	return newer(ks.LastError, ks.PublishError)
}

// newer returns the newer of kept and e (either may be nil).
func newer(kept, e *eventbus.BrokerError) *eventbus.BrokerError {
	if e != nil && (kept == nil || e.Time.After(kept.Time)) {
		return e
	}
	return kept
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
		st := Status{Service: s.Name, Checks: s.Ready.CheckNames(), LastError: box.get(), Kafka: s.consumers.status()}
		if err := s.Ready.Health(r.Context()); err != nil {
			st.NotReady = err.Error()
		} else {
			st.Ready = true
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	return mux
}
