package http

import (
	"context"
	"net/http"
	"time"

	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Shedder bounds the calls in flight to each upstream service: a call that finds no free slot
// within Wait gets a quick 503 with Retry-After instead of queueing behind a saturated backend.
// WebSocket streams are long-lived and not counted. Build it with NewShedder.
type Shedder struct {
	slots map[routes.Service]chan struct{}
	wait  time.Duration
	shed  metric.Int64Counter
}

// NewShedder allows max calls in flight per upstream service; meter may be nil.
func NewShedder(max int, wait time.Duration, meter metric.Meter) *Shedder {
	s := &Shedder{slots: map[routes.Service]chan struct{}{}, wait: wait}
	for _, svc := range routes.Upstreams {
		s.slots[svc] = make(chan struct{}, max)
	}
	if meter != nil {
		s.shed, _ = meter.Int64Counter("edge_shed_total", metric.WithDescription("calls refused with 503 because the upstream had no free slot"))
	}
	return s
}

// Middleware is the Shedder middleware.
func (s *Shedder) Middleware(rt routes.Route, next http.Handler) http.Handler {
	slots := s.slots[rt.Service]
	if slots == nil || rt.WebSocket {
		return next
	}
	// The label is upstream, not service: a ServiceMonitor's scrape sets its own service target
	// label (the edge's Service), and Prometheus would rename this one exported_service.
	attrs := metric.WithAttributes(attribute.String("upstream", string(rt.Service)))
	if s.shed != nil {
		// The series starts at zero for each service a shed can name, so the alert's rate()
		// sees the first 503 (a series born at 1 shows no rate).
		s.shed.Add(context.Background(), 0, attrs)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			if !s.acquireWithin(slots) {
				if s.shed != nil {
					s.shed.Add(r.Context(), 1, attrs)
				}
				w.Header().Set("Retry-After", "1")
				proxy.WriteError(w, http.StatusServiceUnavailable, string(rt.Service)+" is saturated; retry later")
				return
			}
		}
		defer func() { <-slots }()
		next.ServeHTTP(w, r)
	})
}

func (s *Shedder) acquireWithin(slots chan struct{}) bool {
	if s.wait <= 0 {
		return false
	}
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}
