// Package http assembles the edge's public handler: the route table served by a ServeMux, API
// key authentication, the per-route middleware chain (rate limits and metering plug in here),
// the edge's own endpoints and the proxies to services.
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/params"
	"github.com/chainintel/chainintel/services/edge/internal/keys"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"golang.org/x/sync/semaphore"
)

// Middleware wraps a route's handler. It runs after authentication, so the caller identity (if
// any) is in the request context.
type Middleware func(rt routes.Route, next http.Handler) http.Handler

// KeyVerifier resolves an API key to a caller.
type KeyVerifier interface {
	Verify(ctx context.Context, raw string) (httpx.Identity, error)
}

// Options configure the public handler.
type Options struct {
	Routes []routes.Route
	// Upstreams are the proxies to services, by service.
	Upstreams map[routes.Service]http.Handler
	// Own are the edge's own endpoints, by route key ("GET /chains").
	Own         map[string]http.Handler
	Keys        KeyVerifier
	Middlewares []Middleware // outermost first
	Log         *slog.Logger
	// Failures, when set, limits failed key checks per client IP.
	Failures *FailedKeys
	// Observer, when set, counts every matched call, refusals included.
	Observer *Observer
	// ClientWriteTimeout, when positive, bounds each write of an answer to the client
	// (writeDeadlines); every call's connection gets a fresh deadline as it arrives.
	ClientWriteTimeout time.Duration
}

// FailedKeys limits failed API key checks per client IP. Each unknown or revoked key an address
// presents takes one request from its budget; once the budget is spent its failures get 429s
// ("too many requests", as every rate limit) with a Retry-After. Only failures are limited: a key
// that verifies is never refused, whatever its address did. The keys of an address over its
// budget are still looked up, but through Lookups, a narrow lane shared by every such address
// of the replica, so a flood of made-up keys holds at most that many lookups (Redis, then the
// database) at once and waits for them rather than crowding out other callers. A key answered
// from the replica's cache costs no budget check at all.
type FailedKeys struct {
	Limiter interface {
		RateLimiter
		Refused(key string, lim ratelimit.Limit) (time.Duration, bool)
	}
	Keys interface {
		Cached(raw string) (id httpx.Identity, ok bool, err error)
	}
	Limit          ratelimit.Limit
	TrustedProxies []netip.Prefix
	// Lookups bounds the concurrent lookups of keys presented by addresses over their budget
	// (nil: unbounded).
	Lookups *semaphore.Weighted
}

// verify looks raw up, through the lane of over-budget lookups when r's address is over its
// failure budget.
func (f *FailedKeys) verify(r *http.Request, v KeyVerifier, raw string) (httpx.Identity, error) {
	if f == nil || f.Lookups == nil {
		return v.Verify(r.Context(), raw)
	}
	if _, over := f.Limiter.Refused(f.budget(r), f.Limit); !over {
		return v.Verify(r.Context(), raw)
	}
	if err := f.Lookups.Acquire(r.Context(), 1); err != nil {
		return httpx.Identity{}, err
	}
	defer f.Lookups.Release(1)
	return v.Verify(r.Context(), raw)
}

// budget names the failure budget of r's client address.
func (f *FailedKeys) budget(r *http.Request) string {
	return "authfail:" + ClientIP(r, f.TrustedProxies)
}

func (f *FailedKeys) refuse(w http.ResponseWriter, retry time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(retry, 1)))
	proxy.WriteError(w, http.StatusTooManyRequests, "too many requests") // API.md: one 429 body for every rate limit
}

// NewHandler returns the edge's public handler.
func NewHandler(o Options) (http.Handler, error) {
	mux := http.NewServeMux()
	for _, rt := range o.Routes {
		var h http.Handler
		if rt.Service == routes.Edge {
			h = o.Own[rt.Key()]
			if h == nil {
				h = notImplemented()
			}
		} else {
			h = o.Upstreams[rt.Service]
			if h == nil {
				return nil, errors.New("no upstream for service " + string(rt.Service))
			}
		}
		if !rt.WebSocket {
			h = withoutUpgrade(wholeBody(h))
		}
		for i := len(o.Middlewares) - 1; i >= 0; i-- {
			h = o.Middlewares[i](rt, h)
		}
		h = authenticate(rt, o.Keys, o.Failures, o.Log, h)
		h = o.Observer.Wrap(rt, h)
		h = writeDeadlines(rt, o.ClientWriteTimeout, h)
		mux.Handle(rt.Method+" "+rt.Pattern, h)
		if rt.Method == http.MethodGet && rt.Service != routes.Edge {
			// A GET pattern also matches HEAD, which the services do not serve: refuse it here,
			// before it takes a rate-limit token or is metered. The edge's own routes answer HEAD
			// as GET without a body.
			mux.Handle(http.MethodHead+" "+rt.Pattern, methodNotAllowed(mux))
		}
	}
	// Anything the table does not match: a 405 naming the allowed methods when the path is
	// known under another method, else a 404.
	mux.Handle("/", methodNotAllowed(mux))
	return front(mux, fixedPaths(o.Routes), o.ClientWriteTimeout), nil
}

// front is the edge's handler before routing: the client's write deadline renewed, the path
// made canonical, internal paths, malformed queries, bodies over the limit and fixed paths
// under another method refused, then mux.
func front(mux *http.ServeMux, fixed map[string][]string, writeIdle time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if writeIdle > 0 {
			// A keep-alive connection keeps the deadline of its previous call: refusals written
			// before a route's own (writeDeadlines) must not find it passed.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeIdle))
		}
		// Route on the canonical path and forward exactly it (CanonicalPath): what the route table
		// authorised is what the service serves.
		decoded, canonical, err := CanonicalPath(r.URL.EscapedPath())
		if err != nil {
			proxy.WriteError(w, http.StatusBadRequest, err.Error())
			return
		}
		r.URL.Path, r.URL.RawPath = decoded, canonical
		// Internal routes of services are never reachable from outside, whatever the encoding.
		if httpx.IsInternalPath(strings.ToLower(r.URL.Path)) {
			proxy.WriteError(w, http.StatusNotFound, "no route for "+receivedPath(r))
			return
		}
		// A pair url.Values would drop (a malformed escape, a ";") would reach the services
		// whole, but the edge's own routes and the operator-name translation read the query
		// through url.Values: refuse it here, named, as every service does.
		if r.URL.RawQuery != "" {
			if _, err := params.RawQuery(r.URL.RawQuery); err != nil {
				proxy.WriteError(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		if r.ContentLength > httpx.MaxBodyBytes {
			proxy.WriteError(w, http.StatusRequestEntityTooLarge, "request body over 1048576 bytes")
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, httpx.MaxBodyBytes)
		}
		// Looked up by the canonical path, as the mux routes: an encoded slash ("batch%2Fall")
		// stays inside its segment there, so it names no fixed path here either.
		if allowed, ok := fixed[canonical]; ok && !slices.Contains(allowed, r.Method) &&
			(r.Method != http.MethodHead || !slices.Contains(allowed, http.MethodGet)) {
			// A path of the table without wildcards under a method it lacks: a 405 even when a
			// wildcard route of that method would take it ("GET /intelligence/address/batch" is
			// no address lookup of "batch").
			refuseMethod(w, r, allowed)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// authenticate verifies the API-Key header as the route requires and puts the identity in the
// request context.
func authenticate(rt routes.Route, v KeyVerifier, fails *FailedKeys, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpx.StripIdentity(r.Header)
		if rt.Class == routes.Public {
			next.ServeHTTP(w, r)
			return
		}
		given := r.Header.Values("API-Key")
		if n := len(given); n > 1 || n == 1 && strings.Contains(given[0], ",") {
			// Which key a call is charged to must never be a guess: a repeated header (or one a
			// proxy joined with commas; keys hold none) is refused before any key is looked up,
			// limited or metered.
			if n == 1 {
				n = strings.Count(given[0], ",") + 1
			}
			proxy.WriteError(w, http.StatusBadRequest, "API-Key: give one key, not "+strconv.Itoa(n))
			return
		}
		raw := r.Header.Get("API-Key")
		if raw == "" && rt.KeyOptional {
			next.ServeHTTP(w, r)
			return
		}
		var id httpx.Identity
		var err error
		cached := false
		if fails != nil {
			id, cached, err = fails.Keys.Cached(raw)
		}
		if !cached {
			id, err = fails.verify(r, v, raw)
		}
		switch {
		case errors.Is(err, keys.ErrInvalid):
			if fails != nil {
				if d := fails.Limiter.Allow(r.Context(), fails.budget(r), fails.Limit); !d.Allowed {
					fails.refuse(w, d.RetryAfter)
					return
				}
			}
			proxy.WriteError(w, http.StatusUnauthorized, "error validating API key")
			return
		case err != nil && r.Context().Err() != nil:
			proxy.WriteError(w, 499, "request cancelled")
			return
		case err != nil:
			log.ErrorContext(r.Context(), "key verification failed", "error", err)
			w.Header().Set("Retry-After", strconv.Itoa(httpx.RetryAfterSeconds)) // a dependency outage, as every service answers it
			proxy.WriteError(w, http.StatusServiceUnavailable, "authentication is unavailable; retry later")
			return
		}
		next.ServeHTTP(w, r.WithContext(httpx.WithIdentity(r.Context(), id)))
	})
}

// routeMethods are the methods a 405 can name, in the order its Allow header lists them.
var routeMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}

// methodNotAllowed answers a request the route table has no route for under its method: a 405
// naming the methods the path has, or a 404 when it has none.
func methodNotAllowed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range routeMethods {
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host}
			if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) > 0 {
			refuseMethod(w, r, allowed)
			return
		}
		proxy.WriteError(w, http.StatusNotFound, "no route for "+receivedPath(r))
	})
}

// receivedPath is the request's path as the client sent it (still escaped), for a 404 to
// echo: the decoded path would show what the client never wrote ("..%2f" as "../") and
// read as if the edge had resolved it.
func receivedPath(r *http.Request) string {
	p := r.RequestURI
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if !strings.HasPrefix(p, "/") { // absolute-form or unset: the canonical escaped path
		p = r.URL.EscapedPath()
	}
	return p
}

// refuseMethod answers a 405 whose Allow header names allowed; it echoes the path as received,
// as a 404 does (receivedPath).
func refuseMethod(w http.ResponseWriter, r *http.Request, allowed []string) {
	allow := strings.Join(allowed, ", ")
	w.Header().Set("Allow", allow)
	proxy.WriteError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+receivedPath(r)+" (allowed: "+allow+")")
}

// fixedPaths are the methods of each path of routes that has no wildcard, in routeMethods
// order. Probing the mux by method cannot tell these apart: a wildcard route of another method
// matches them too.
func fixedPaths(rs []routes.Route) map[string][]string {
	has := map[string]map[string]bool{}
	for _, rt := range rs {
		if strings.Contains(rt.Pattern, "{") {
			continue
		}
		if has[rt.Pattern] == nil {
			has[rt.Pattern] = map[string]bool{}
		}
		has[rt.Pattern][rt.Method] = true
	}
	out := make(map[string][]string, len(has))
	for p, ms := range has {
		for _, m := range routeMethods {
			if ms[m] {
				out[p] = append(out[p], m)
			}
		}
	}
	return out
}

func notImplemented() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		proxy.WriteError(w, http.StatusNotImplemented, "not implemented yet")
	})
}

// Health answers the public liveness check with plain "ok".
func Health() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
}

// JSON answers every call with the same JSON document (precomputed).
func JSON(v any) (http.Handler, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Raw("application/json; charset=utf-8", b), nil
}

// Raw answers every call with body.
func Raw(contentType string, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	})
}

// withoutUpgrade serves a route that is not a WebSocket route as the plain request it is: an
// upgrade asked of it is dropped, so the proxy neither upgrades it nor exempts it from the
// upstream timeout (TestUpgradeHeaderOnARouteThatIsNotAStream). Without an Upgrade header
// there is no upgrade (proxy.IsUpgrade, and the reverse proxy's own reading), whatever
// Connection names; the proxy drops Connection and the headers it names as hop-by-hop.
func withoutUpgrade(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Upgrade")
		next.ServeHTTP(w, r)
	})
}

// wholeBody reads a body of unknown length (chunked) before the call goes on, under the
// MaxBytesReader NewHandler put on it: a body with a Content-Length over the limit is refused
// before routing, but a chunked one is only measured as it is read, and a service whose route
// takes no body never reads it, so without this it would be forwarded in part and answered 200.
// It runs innermost, after authentication and the rate limit, so only callers the edge admits
// make it hold up to 1 MiB (TestChunkedBodyOverTheLimit). The edge's chain reads bodies earlier
// (ReadBody, bounded in time, before the metering and the slots); this keeps a handler built
// without it from forwarding a partial body.
func wholeBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength < 0 {
			if _, err := bufferBody(r); err != nil {
				writeBodyError(w, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bufferBody reads r's body whole (under the MaxBytesReader NewHandler put on it: a
// *http.MaxBytesError past the limit) and puts it back in memory with its length, so what
// reads it next (the metering's count of a batch's addresses, wholeBody, the proxy) reads no
// copy of its own, and the proxy forwards it with a Content-Length.
func bufferBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	return b, nil
}

// writeBodyError answers a request whose body could not be read: 413 when it is over the
// limit NewHandler set, else 400.
func writeBodyError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		proxy.WriteError(w, http.StatusRequestEntityTooLarge, "request body over "+strconv.FormatInt(tooBig.Limit, 10)+" bytes")
		return
	}
	proxy.WriteError(w, http.StatusBadRequest, "request body could not be read")
}
