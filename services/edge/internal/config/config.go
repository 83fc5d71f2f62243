// Package config is the edge's configuration, read from EDGE_* environment variables.
package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// Prefix of every edge environment variable.
const Prefix = "EDGE_"

// Config is the edge's configuration.
type Config struct {
	service.Base
	service.Postgres
	service.Kafka
	service.Redis

	// Chains lists the chains this deployment serves (GET /chains); empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`

	// Upstream base URLs of the services behind the edge.
	UpstreamTransfers      string `env:"UPSTREAM_TRANSFERS" envDefault:"http://transfers:8080"`
	UpstreamIntelligence   string `env:"UPSTREAM_INTELLIGENCE" envDefault:"http://intelligence:8080"`
	UpstreamUserLabels     string `env:"UPSTREAM_USER_LABELS" envDefault:"http://user-labels:8080"`
	UpstreamBalances       string `env:"UPSTREAM_BALANCES" envDefault:"http://balances:8080"`
	UpstreamTokenAnalytics string `env:"UPSTREAM_TOKEN_ANALYTICS" envDefault:"http://token-analytics:8080"`
	UpstreamStreamFanout   string `env:"UPSTREAM_STREAM_FANOUT" envDefault:"http://stream-fanout:8080"`

	// StreamSocketBuffer is, for a WebSocket stream proxied to stream-fanout, the kernel send
	// buffer of the client's socket and the receive buffer of the edge's connection to
	// stream-fanout (bytes; 0: the system's, autotuned to megabytes); StreamCopyBuffer the
	// buffer each direction is copied through (0: 32 KiB). What they hold is charged and not
	// read (docs/edge.md, WebSocket streams).
	StreamSocketBuffer int `env:"STREAM_SOCKET_BUFFER" envDefault:"65536"`
	StreamCopyBuffer   int `env:"STREAM_COPY_BUFFER" envDefault:"16384"`

	// UpstreamTimeout bounds every proxied call (not WebSocket streams).
	UpstreamTimeout time.Duration `env:"UPSTREAM_TIMEOUT" envDefault:"30s"`
	// BodyReadTimeout bounds the reading of a call's request body, which the edge reads whole
	// before the call is metered or takes an upstream slot: a client that stops sending gets a
	// 408 instead of holding a slot. ClientWriteTimeout bounds each write of an answer (not of
	// WebSocket streams): a client that stops reading is cut off after it, freeing the slot.
	BodyReadTimeout    time.Duration `env:"BODY_READ_TIMEOUT" envDefault:"10s"`
	ClientWriteTimeout time.Duration `env:"CLIENT_WRITE_TIMEOUT" envDefault:"30s"`
	// KeyCacheTTL is how long a verified key stays cached in Redis; KeyLocalTTL how long in
	// process (the backstop for a lost invalidation: a revoked key is refused within it).
	KeyCacheTTL time.Duration `env:"KEY_CACHE_TTL" envDefault:"60s"`
	KeyLocalTTL time.Duration `env:"KEY_LOCAL_TTL" envDefault:"1s"`
	// CreditsIncludedTTL is how long a replica keeps a period's recorded included credits (the
	// greatest tier used in it) for the credit check: a key of a greater tier first used in a
	// period raises the allowance of the entity's other keys within it (usage.IncludedOptions).
	CreditsIncludedTTL time.Duration `env:"CREDITS_INCLUDED_TTL" envDefault:"30s"`

	// OperatorName is the word of the operator-named fields of the public API (serviceEntity,
	// serviceLabel, the search toggles, /service/circulating); an operator migrating from the
	// hosted API sets its own so its clients keep working unchanged (docs/edge.md "Attribution").
	OperatorName string `env:"OPERATOR_NAME" envDefault:"service"`

	// TiersFile is a YAML or JSON tier table; empty uses the built-in table (docs/edge.md).
	TiersFile string `env:"TIERS_FILE"`

	// PublicRate and PublicBurst limit public routes per client IP.
	PublicRate  int `env:"PUBLIC_RATE" envDefault:"10"`
	PublicBurst int `env:"PUBLIC_BURST" envDefault:"20"`
	// FailedKeyRate and FailedKeyBurst limit failed API key checks per client IP: past the
	// burst, an address gets 429s for keys that do not verify until its budget refills (keys that
	// verify always pass). FailedKeyLookups bounds the concurrent lookups of keys presented by
	// addresses over their budget, per replica.
	FailedKeyRate    int `env:"FAILED_KEY_RATE" envDefault:"1"`
	FailedKeyBurst   int `env:"FAILED_KEY_BURST" envDefault:"30"`
	FailedKeyLookups int `env:"FAILED_KEY_LOOKUPS" envDefault:"4"`
	// TrustedProxies are CIDRs of proxies (the ingress) whose X-Forwarded-For is believed when
	// deriving a client's IP; empty trusts none and uses the connection's peer address.
	TrustedProxies []string `env:"TRUSTED_PROXIES" envSeparator:","`
	// TraceTrustedProxies are CIDRs of peers whose trace context (traceparent, tracestate,
	// baggage) the edge follows; empty follows none. Apart from TrustedProxies because an
	// ingress that forwards a client's address faithfully usually passes the client's trace
	// headers through unchanged as well: trust here only a proxy that sets them itself.
	TraceTrustedProxies []string `env:"TRACE_TRUSTED_PROXIES" envSeparator:","`
	// CORSOrigins are the browser origins (scheme://host[:port], or * for any) allowed to call
	// the API from a page; empty answers no CORS (browsers then refuse cross-origin calls).
	CORSOrigins []string `env:"CORS_ORIGINS" envSeparator:","`
	// LimiterTimeout bounds a rate-limit decision in Redis; LimiterFallback is how long the
	// edge limits in process after Redis failed before trying Redis again.
	LimiterTimeout  time.Duration `env:"LIMITER_TIMEOUT" envDefault:"100ms"`
	LimiterFallback time.Duration `env:"LIMITER_FALLBACK" envDefault:"2s"`
	// LimiterLeaseTTL is how long a replica may hold tokens leased from a budget in Redis;
	// LimiterMaxLease caps one lease (1 turns leasing off: one Redis call per request).
	LimiterLeaseTTL time.Duration `env:"LIMITER_LEASE_TTL" envDefault:"100ms"`
	LimiterMaxLease int           `env:"LIMITER_MAX_LEASE" envDefault:"64"`

	// MaxInFlight bounds concurrent proxied calls per upstream service; a call that finds no
	// slot within ShedWait gets a quick 503.
	MaxInFlight int           `env:"MAX_IN_FLIGHT" envDefault:"512"`
	ShedWait    time.Duration `env:"SHED_WAIT" envDefault:"20ms"`

	// UsageQueue bounds usage events waiting to be published (beyond it they are dropped and
	// counted); UsageBatch is the most published in one write.
	UsageQueue int `env:"USAGE_QUEUE" envDefault:"65536"`
	UsageBatch int `env:"USAGE_BATCH" envDefault:"1000"`
	// CreditSync is how often the in-process credit ledger syncs with Redis.
	CreditSync time.Duration `env:"CREDIT_SYNC" envDefault:"250ms"`
	// UsageDedupRetention is how long consumed usage event ids are remembered for dedup.
	UsageDedupRetention time.Duration `env:"USAGE_DEDUP_RETENTION" envDefault:"168h"`
	// UsageHourlyRetention is how long hourly usage per key and route (GET
	// /analytics/endpoint-calls) is kept; 0 keeps it forever. Billing periods are always kept.
	UsageHourlyRetention time.Duration `env:"USAGE_HOURLY_RETENTION" envDefault:"9528h"`
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	c.validateRouting(&p)
	c.validateLimits(&p)
	return p.Err()
}

// validateRouting checks the base settings, chains, upstreams, keys and tiers.
func (c Config) validateRouting(p *config.Problems) {
	if err := c.Base.Validate(); err != nil {
		*p = append(*p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("EDGE_CHAINS: %v", err)
	}
	for name, u := range c.Upstreams() {
		if pu, err := url.Parse(u); err != nil || pu.Scheme == "" || pu.Host == "" {
			p.Addf("upstream %s URL %q is not an absolute URL", name, u)
		}
	}
	if c.UpstreamTimeout <= 0 {
		p.Addf("EDGE_UPSTREAM_TIMEOUT must be positive")
	}
	if c.BodyReadTimeout <= 0 || c.ClientWriteTimeout <= 0 {
		p.Addf("EDGE_BODY_READ_TIMEOUT and EDGE_CLIENT_WRITE_TIMEOUT must be positive")
	}
	if c.StreamSocketBuffer < 0 || c.StreamCopyBuffer < 0 {
		p.Addf("EDGE_STREAM_SOCKET_BUFFER and EDGE_STREAM_COPY_BUFFER must not be negative (0: the default)")
	}
	if c.KeyCacheTTL <= 0 || c.KeyLocalTTL <= 0 {
		p.Addf("EDGE_KEY_CACHE_TTL and EDGE_KEY_LOCAL_TTL must be positive")
	}
	if c.CreditsIncludedTTL <= 0 {
		p.Addf("EDGE_CREDITS_INCLUDED_TTL must be positive")
	}
	if _, err := tiers.FromFile(c.TiersFile); err != nil {
		p.Addf("EDGE_TIERS_FILE: %v", err)
	}
}

// validateLimits checks the rate limits, proxies, limiter, shedding and usage settings.
func (c Config) validateLimits(p *config.Problems) {
	if c.FailedKeyRate <= 0 || c.FailedKeyBurst <= 0 || c.FailedKeyLookups <= 0 {
		p.Addf("EDGE_FAILED_KEY_RATE, EDGE_FAILED_KEY_BURST and EDGE_FAILED_KEY_LOOKUPS must be positive")
	}
	if c.PublicRate <= 0 || c.PublicBurst <= 0 {
		p.Addf("EDGE_PUBLIC_RATE and EDGE_PUBLIC_BURST must be positive")
	}
	if _, err := ParseCIDRs(c.TrustedProxies); err != nil {
		p.Addf("EDGE_TRUSTED_PROXIES: %v", err)
	}
	if _, err := ParseCIDRs(c.TraceTrustedProxies); err != nil {
		p.Addf("EDGE_TRACE_TRUSTED_PROXIES: %v", err)
	}
	if err := CheckOrigins(c.CORSOrigins); err != nil {
		p.Addf("EDGE_CORS_ORIGINS: %v", err)
	}
	if c.LimiterTimeout <= 0 || c.LimiterFallback <= 0 || c.LimiterLeaseTTL <= 0 {
		p.Addf("EDGE_LIMITER_TIMEOUT, EDGE_LIMITER_FALLBACK and EDGE_LIMITER_LEASE_TTL must be positive")
	}
	if c.LimiterMaxLease < 1 || c.LimiterMaxLease > 10_000 {
		p.Addf("EDGE_LIMITER_MAX_LEASE must be between 1 and 10000, got %d", c.LimiterMaxLease)
	}
	if c.MaxInFlight <= 0 || c.ShedWait < 0 {
		p.Addf("EDGE_MAX_IN_FLIGHT must be positive and EDGE_SHED_WAIT not negative")
	}
	if c.UsageQueue <= 0 || c.UsageBatch <= 0 || c.CreditSync <= 0 || c.UsageDedupRetention <= 0 {
		p.Addf("EDGE_USAGE_QUEUE, EDGE_USAGE_BATCH, EDGE_CREDIT_SYNC and EDGE_USAGE_DEDUP_RETENTION must be positive")
	}
	if c.UsageHourlyRetention != 0 && c.UsageHourlyRetention < 24*time.Hour {
		p.Addf("EDGE_USAGE_HOURLY_RETENTION must be 0 (keep) or at least 24h, got %s", c.UsageHourlyRetention)
	}
}

// ParseCIDRs parses CIDRs (a bare IP is taken as a single-address prefix).
func ParseCIDRs(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not an IP or CIDR", s)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP or CIDR", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// CheckOrigins checks EDGE_CORS_ORIGINS: each entry is * or an origin, scheme://host[:port]
// with no path, as a browser sends it in its Origin header.
func CheckOrigins(list []string) error {
	for _, o := range list {
		o = strings.TrimSpace(o)
		if o == "" || o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("%q is not an origin such as https://app.example.com", o)
		}
	}
	return nil
}

// Upstreams maps service names to their base URLs.
func (c Config) Upstreams() map[string]string {
	return map[string]string{
		"transfers":       c.UpstreamTransfers,
		"intelligence":    c.UpstreamIntelligence,
		"user-labels":     c.UpstreamUserLabels,
		"balances":        c.UpstreamBalances,
		"token-analytics": c.UpstreamTokenAnalytics,
		"stream-fanout":   c.UpstreamStreamFanout,
	}
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
