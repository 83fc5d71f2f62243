// Package proxy forwards public requests from the edge to the service that owns them. It strips
// client-supplied identity headers and the API key, signs the caller's identity, bounds every
// call with a timeout, reports the rows a service returned (for per-row credits) and turns
// upstream failures into the API's error shape.
package proxy

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"go.opentelemetry.io/otel/propagation"
)

// CallInfo is filled in while a request is proxied; the edge's middleware reads it afterwards.
type CallInfo struct {
	Rows    int64 // rows the service reported; -1 when it reported none
	Service string
}

type callInfoKey struct{}

// WithCallInfo returns ctx with a fresh CallInfo to be filled by the proxy.
func WithCallInfo(ctx context.Context) (context.Context, *CallInfo) {
	ci := &CallInfo{Rows: -1}
	return context.WithValue(ctx, callInfoKey{}, ci), ci
}

func callInfo(ctx context.Context) *CallInfo {
	ci, _ := ctx.Value(callInfoKey{}).(*CallInfo)
	return ci
}

// Options configure a proxy.
type Options struct {
	Service   string
	Target    string
	Signer    *httpx.Signer
	Timeout   time.Duration // per call; WebSocket upgrades are not bounded
	Transport http.RoundTripper
	// Propagator carries the trace context of the edge's server span to the service (whose
	// server span becomes its child). No client span is recorded per call: the edge's server
	// span already covers it, and a second span and its metrics per request cost the edge a
	// tenth of its throughput. Nil propagates nothing.
	Propagator propagation.TextMapPropagator
	// KeyHash sends the caller's key hash (httpx.HeaderCallerKey) with each call, for a service
	// that closes what a key has open when the key's invalidation names it (stream-fanout).
	KeyHash bool
	// Streams bounds the buffers of the WebSocket upgrades proxied (zero: the system's and the
	// reverse proxy's defaults).
	Streams Streams
}

// New returns a handler that forwards to opts.Target.
func New(o Options) (http.Handler, error) {
	target, err := url.Parse(o.Target)
	if err != nil || target.Scheme == "" || target.Host == "" {
		return nil, errors.New("upstream " + o.Service + " URL " + o.Target + " is not absolute")
	}
	rt := o.Transport
	if rt == nil {
		rt = httpx.NewTransport()
	}
	if o.Streams.on() {
		rt = byUpgrade{rt: rt, upgrade: o.Streams.upgradeTransport()}
	}
	trace := newTraceInjector(o.Propagator)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
			pr.SetXForwarded()
			h := pr.Out.Header
			h.Del("API-Key")
			httpx.StripIdentity(h)
			if id, ok := httpx.IdentityFrom(pr.In.Context()); ok {
				var key string
				if o.KeyHash {
					key = keyHash(pr.In.Header.Get("API-Key"))
				}
				o.Signer.SignWithKey(h, id, key, time.Now())
			}
			trace.inject(pr.In.Context(), h)
		},
		Transport:  rt,
		BufferPool: buffers,
		ModifyResponse: func(resp *http.Response) error {
			if ci := callInfo(resp.Request.Context()); ci != nil {
				ci.Service = o.Service
				if v := resp.Header.Get(httpx.HeaderRows); v != "" {
					if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
						ci.Rows = n
					}
				}
			}
			resp.Header.Del(httpx.HeaderRows)
			if resp.StatusCode == http.StatusUpgradeRequired {
				// The proxy drops hop-by-hop headers, Upgrade among them, but a 426 must name the
				// protocol to upgrade to (RFC 9110, 15.5.22): WebSocket, the only one a service
				// asks for.
				resp.Header.Set("Upgrade", "websocket")
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			status, msg := classify(o.Service, err)
			WriteError(w, status, msg)
		},
	}
	timeout, streams := o.Timeout, o.Streams
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only a real upgrade goes without the timeout; the edge's handler strips Upgrade from
		// requests of routes that are not WebSocket routes (NewHandler), so no other route can
		// take a call out of the timeout with a header.
		upgrade := IsUpgrade(r.Header)
		if timeout > 0 && !upgrade {
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		if upgrade {
			w = &streamWriter{ResponseWriter: w, s: streams}
		}
		rp.ServeHTTP(w, r)
	}), nil
}

// buffers recycles the 32 KiB copy buffers of every proxy (without it each call allocates one).
var buffers = &bufferPool{p: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.p.Get().(*[]byte) }
func (b *bufferPool) Put(v []byte) { b.p.Put(&v) }

// keyHash names the caller's key as the edge's invalidations name it (keys.Hash, in hex); ""
// for none.
func keyHash(raw string) string {
	if raw == "" {
		return ""
	}
	sum := keys.Hash(raw)
	return hex.EncodeToString(sum[:])
}

func classify(service string, err error) (int, string) {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "request body over " + strconv.FormatInt(tooBig.Limit, 10) + " bytes"
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, service + " did not answer in time; retry later"
	case errors.Is(err, context.Canceled):
		return 499, "request cancelled"
	case errors.Is(err, syscall.ECONNREFUSED), isDialError(err):
		return http.StatusServiceUnavailable, service + " is unavailable; retry later"
	default:
		return http.StatusBadGateway, service + " failed to answer; retry later"
	}
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// WriteError writes the API's error shape.
func WriteError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(httpx.ErrorBody{Error: msg})
}

// traceInjector sends upstream only the edge's own trace context: what the caller sent under
// the propagator's names (traceparent, tracestate, baggage) is dropped first, since Inject writes
// a name only when the context has a value for it (a new root span has no tracestate) and would
// let the caller's through. The names are read once, not per call.
type traceInjector struct {
	p      propagation.TextMapPropagator
	fields []string
}

func newTraceInjector(p propagation.TextMapPropagator) traceInjector {
	if p == nil {
		return traceInjector{}
	}
	return traceInjector{p: p, fields: p.Fields()}
}

func (t traceInjector) inject(ctx context.Context, h http.Header) {
	if t.p == nil {
		return
	}
	for _, f := range t.fields {
		h.Del(f)
	}
	t.p.Inject(ctx, propagation.HeaderCarrier(h))
}
