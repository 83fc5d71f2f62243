package e2e

import (
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"sync"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a span some service exported.
type Span struct {
	Service string
	Name    string
	TraceID [16]byte
	Links   [][16]byte // trace ids of the span's links
}

// InTrace reports whether the span belongs to the trace or links to it (a consumer's batch
// span continues its first record's trace and links the others').
func (s Span) InTrace(id [16]byte) bool {
	if s.TraceID == id {
		return true
	}
	for _, l := range s.Links {
		if l == id {
			return true
		}
	}
	return false
}

// spanSink is a minimal OTLP/HTTP receiver: the local stack exports every service's traces to
// it, so tests can follow a trace across services.
type spanSink struct {
	mu    sync.Mutex
	spans []Span
	srv   *http.Server
	url   string
}

func startSpanSink() (*spanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &spanSink{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", s.traces)
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	s.srv = &http.Server{Handler: mux}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *spanSink) traces(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	s.mu.Lock()
	for _, rs := range req.ResourceSpans {
		svc := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				svc = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				var id [16]byte
				copy(id[:], sp.TraceId)
				span := Span{Service: svc, Name: sp.Name, TraceID: id}
				for _, l := range sp.Links {
					var lid [16]byte
					copy(lid[:], l.TraceId)
					span.Links = append(span.Links, lid)
				}
				s.spans = append(s.spans, span)
			}
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}

// Spans returns the spans received so far.
func (s *spanSink) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}
