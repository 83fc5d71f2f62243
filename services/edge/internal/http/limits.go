package http

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/services/edge/internal/proxy"
	"github.com/chainintel/chainintel/services/edge/internal/ratelimit"
	"github.com/chainintel/chainintel/services/edge/internal/routes"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// RateLimiter decides one request against a named budget (ratelimit.Limiter).
type RateLimiter interface {
	Allow(ctx context.Context, key string, lim ratelimit.Limit) ratelimit.Decision
}

// TierAccess refuses API-tier routes (403) to keys whose tier lacks the API flag, and keys whose
// tier is not in the table at all.
func TierAccess(table tiers.Table) Middleware {
	return func(rt routes.Route, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id, ok := httpx.IdentityFrom(r.Context())
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			tr, known := table.Get(id.Tier)
			switch {
			case !known:
				proxy.WriteError(w, http.StatusForbidden, "the tier of this API key ("+id.Tier+") is not configured; contact the operator")
			case rt.APITier && !tr.API:
				proxy.WriteError(w, http.StatusForbidden, rt.Pattern+" needs the API tier; the "+tr.Name+" tier does not include it")
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// RateLimits applies the rate classes of API.md: standard routes per key with the tier's rate
// and burst; heavy routes per key at the tier's heavy rate, one budget shared by every heavy
// route (API.md: "1 request/s per key", so spreading calls over heavy routes buys no more of
// them) and apart from the standard one; calls without a key
// (public routes, key-optional routes called without one) per client IP. Every limited response
// carries X-RateLimit-Limit, -Remaining and -Reset; a refused one is a 429 with Retry-After.
type RateLimits struct {
	Tiers   tiers.Table
	Limiter RateLimiter
	Public  ratelimit.Limit
	// TrustedProxies are the proxies whose X-Forwarded-For is believed (see ClientIP).
	TrustedProxies []netip.Prefix
}

// Middleware is the RateLimits middleware.
func (l RateLimits) Middleware(rt routes.Route, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var key string
		var lim ratelimit.Limit
		if id, ok := httpx.IdentityFrom(r.Context()); ok {
			tr, _ := l.Tiers.Get(id.Tier) // TierAccess refused unknown tiers
			if rt.Class == routes.Heavy {
				key, lim = "heavy:"+id.KeyID, ratelimit.Limit{Rate: tr.HeavyRate, Burst: tr.HeavyRate}
			} else {
				key, lim = "std:"+id.KeyID, ratelimit.Limit{Rate: tr.Rate, Burst: tr.Burst}
			}
		} else {
			key, lim = "ip:"+ClientIP(r, l.TrustedProxies), l.Public
		}
		d := l.Limiter.Allow(r.Context(), key, lim)
		// Canonical names assigned directly: Header.Set would canonicalize them on every call.
		h := w.Header()
		h["X-Ratelimit-Limit"] = []string{strconv.Itoa(d.Limit)}
		h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(min(max(d.Remaining, 0), d.Limit))}
		h["X-Ratelimit-Reset"] = []string{strconv.Itoa(ceilSeconds(d.ResetAfter, 0))}
		if !d.Allowed {
			h.Set("Retry-After", strconv.Itoa(ceilSeconds(d.RetryAfter, 1)))
			proxy.WriteError(w, http.StatusTooManyRequests, "too many requests")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func ceilSeconds(d time.Duration, least int) int {
	return max(int(math.Ceil(d.Seconds())), least)
}

// ClientIP is the address a public call is limited by. The connection's peer is the client
// unless it is a trusted proxy (the ingress); then X-Forwarded-For is read from the right,
// skipping trusted proxies, and the first address not trusted is the client. Addresses a client
// wrote further left are never believed, so a client cannot pick its own budget. When every
// hop is trusted, the leftmost is the client. An IPv6 client is its /64 ("2001:db8::/64"): a
// host is commonly given a whole /64 and may use any address of it, so one budget per address
// would give it 2^64 budgets (of public calls and of failed key checks).
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return budgetAddr(peer)
	}
	client := peer
	xff := r.Header.Values("X-Forwarded-For")
	for i := len(xff) - 1; i >= 0; i-- {
		hops := strings.Split(xff[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[j]))
			if err != nil {
				return budgetAddr(client) // garbage from here on: the last hop we can vouch for
			}
			client = a.Unmap()
			if !isTrusted(client, trusted) {
				return budgetAddr(client)
			}
		}
	}
	return budgetAddr(client)
}

// budgetAddr names the client a budget belongs to: an IPv4 address as it is, an IPv6 one by
// its /64.
func budgetAddr(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// PeerTrusted reports whether the request's direct peer is one of the trusted proxies.
func PeerTrusted(r *http.Request, trusted []netip.Prefix) bool {
	if len(trusted) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	return err == nil && isTrusted(peer.Unmap(), trusted)
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
