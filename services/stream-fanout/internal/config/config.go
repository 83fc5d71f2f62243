// Package config is the stream-fanout service's configuration, read from STREAM_* environment
// variables.
package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/edge/tiers"
)

// Prefix of every stream-fanout environment variable.
const Prefix = "STREAM_"

// Config is the stream-fanout service's configuration.
type Config struct {
	service.Base
	service.Kafka
	service.Redis

	// Chains lists the chains this deployment serves; empty means all.
	Chains []string `env:"CHAINS" envSeparator:","`
	// RedisPrefix starts every Redis key the service writes (sessions, replay buffers, quotas).
	RedisPrefix string `env:"REDIS_PREFIX" envDefault:"stream:"`
	// UserLabelsURL is the user-labels service; empty disables callers' labels and user entities.
	UserLabelsURL string `env:"USER_LABELS_URL" envDefault:"http://user-labels:8080" envEmpty:"off"`
	// TokenAnalyticsURL is the token registry (token-analytics) a fresh filter's pricing ids are
	// checked against, as GET /transfers checks them; empty takes every pricing id unchecked.
	TokenAnalyticsURL string `env:"TOKEN_ANALYTICS_URL" envDefault:"http://token-analytics:8080" envEmpty:"off"`
	// Window is how long a session waits for a reconnect; V2Window the same for v2 streams.
	Window   time.Duration `env:"SESSION_WINDOW" envDefault:"5m"`
	V2Window time.Duration `env:"V2_WINDOW" envDefault:"10m"`
	// QueueSize is the deliveries a connection may have waiting before it is dropped as slow,
	// plus QueuePerFilter for each filter of its session, at most QueueMax: one transfer owes
	// a session one delivery per filter it matches.
	QueueSize      int `env:"QUEUE_SIZE" envDefault:"1024"`
	QueuePerFilter int `env:"QUEUE_PER_FILTER" envDefault:"256"`
	QueueMax       int `env:"QUEUE_MAX" envDefault:"16384"`
	// ReplayMaxBytes bounds a session's replay buffer in Redis (the deliveries it was owed at a
	// disconnect, rendered), ReplayMaxBytesPerKey all of a key's sessions' together (0: no
	// bound): a save keeps the oldest that fit and drops the rest, told to the reconnect
	// (replayDropped).
	ReplayMaxBytes       int64 `env:"REPLAY_MAX_BYTES" envDefault:"4194304"`
	ReplayMaxBytesPerKey int64 `env:"REPLAY_MAX_BYTES_PER_KEY" envDefault:"33554432"`
	// CopyWindow is how many transfers of each partition of chain.transfers.v1 are remembered
	// (by a hash of chain, id and block hash, about 40 bytes each: some 2.5 MB a partition at the
	// default) so that one ingest published again at a later offset is streamed, and charged,
	// once (0: none is).
	CopyWindow int `env:"COPY_WINDOW" envDefault:"65536"`
	// SendBuffer is each connection's kernel send buffer (SO_SNDBUF, bytes; 0 for the system's
	// autotuned one, megabytes): what it holds counts as delivered and charged before the client
	// reads it.
	SendBuffer   int           `env:"SEND_BUFFER" envDefault:"32768"`
	PingInterval time.Duration `env:"PING_INTERVAL" envDefault:"20s"`
	WriteTimeout time.Duration `env:"WRITE_TIMEOUT" envDefault:"10s"`
	// Writers is how many goroutines write to connections (0: four per core the process may
	// use); more are added while all of them are stuck on clients that do not read.
	Writers        int `env:"WRITERS" envDefault:"0"`
	MaxConnsPerKey int `env:"MAX_CONNS_PER_KEY" envDefault:"20"`
	MaxFilters     int `env:"MAX_FILTERS" envDefault:"50"`
	// CatchUpParallel is how many resumes a replica reads the transfer topic back for at once,
	// one per key (the others wait): each holds what its session's filters matched since its
	// saved position, up to 2,000,000 records read.
	CatchUpParallel int `env:"CATCHUP_PARALLEL" envDefault:"2"`
	// MaxCatchUp is the most records one resume reads back (a partition further behind is
	// skipped and told in replayGaps' place in the log): with CatchUpParallel it bounds what a
	// replica's catch-ups hold, about 1.5 KB per delivery they matched.
	MaxCatchUp int `env:"MAX_CATCHUP" envDefault:"2000000"`
	// MaxSessionsPerKey caps the live sessions and v2 streams of a key (POST /ws/sessions and
	// POST /ws/v2/streams over it are refused with 429, a subscribe that would make a session
	// with SESSION_LIMIT).
	MaxSessionsPerKey int `env:"MAX_SESSIONS_PER_KEY" envDefault:"100"`
	// MaxSessionFilterBytes bounds the JSON a session's filters are stored in, in Redis: a
	// subscribe that would pass it is refused (INVALID_FILTER).
	MaxSessionFilterBytes int `env:"MAX_SESSION_FILTER_BYTES" envDefault:"65536"`
	// MessageRate (a second) and MessageBurst limit each connection's client messages: one over
	// them is answered RATE_LIMITED, and MessageBurst of them in a row close the connection (1008).
	MessageRate  float64       `env:"MESSAGE_RATE" envDefault:"10"`
	MessageBurst int           `env:"MESSAGE_BURST" envDefault:"50"`
	Checkpoint   time.Duration `env:"CHECKPOINT" envDefault:"5s"`
	// OffsetsTTL is how long a read of the transfer topic's end, and of its first kept offsets,
	// serves the replica's connects and resumes (one ListOffsets for many clients connecting at
	// once). A resume whose replay finds the log's start moved since is still told of the gap.
	OffsetsTTL time.Duration `env:"OFFSETS_TTL" envDefault:"1s"`
	// TiersFile is the edge's tier table (EDGE_TIERS_FILE: the same file, or empty for the
	// built-in table of both): its stream quotas and credit limits are enforced here.
	TiersFile string `env:"TIERS_FILE"`
	// DefaultQuota ("<per hour>/<per month>") applies to a tier the table does not name.
	DefaultQuota string `env:"DEFAULT_QUOTA" envDefault:"10000/1000000"`
	// KeyInvalidateChannel is the edge's key invalidation channel (empty: the edge's,
	// keyevents.DefaultChannel): a key it names has its open connections closed.
	KeyInvalidateChannel string `env:"KEY_INVALIDATE_CHANNEL"`
	// Alerts turns the alerts' webhook delivery on or off (on, off; empty: on when
	// USER_LABELS_URL is set): the callers' /user/alerts rules, read from user-labels, matched
	// against chain.transfers.v1 and POSTed to their webhooks (docs/stream-fanout.md, "Alerts").
	Alerts string `env:"ALERTS"`
	// AlertsGroup is the consumer group the replicas share chain.transfers.v1's partitions in
	// for the alerts: each transfer is matched against the alerts by one replica.
	AlertsGroup string `env:"ALERTS_GROUP" envDefault:"stream-fanout-alerts"`
	// AlertsFromStart has a group that has committed nothing yet read the topic from its first
	// kept record rather than its end (tests: a deployment would deliver every transfer
	// retention keeps).
	AlertsFromStart bool `env:"ALERTS_FROM_START" envDefault:"false"`
	// AlertsReload is how often every alert is read again from user-labels (changes arrive on
	// user.changes.v1 between reloads).
	AlertsReload time.Duration `env:"ALERTS_RELOAD" envDefault:"5m"`
	// AlertRetryWindow bounds how long one webhook delivery is retried, backing off, before it is
	// given up (and the batch's offsets committed without it).
	AlertRetryWindow time.Duration `env:"ALERT_RETRY_WINDOW" envDefault:"2m"`
	// AlertWebhookCooldown is how long a webhook is not POSTed to after one of its deliveries
	// was given up (its matches meanwhile given up as webhook_suspended).
	AlertWebhookCooldown time.Duration `env:"ALERT_WEBHOOK_COOLDOWN" envDefault:"5m"`
	// AlertMaxPerHour is the most transfers a user's alerts deliver in a UTC hour, all its
	// alerts and every replica together (as the stream's hourly quota bounds a key's stream);
	// the rest of the hour's matches are given up (hourly_limit).
	AlertMaxPerHour int64 `env:"ALERT_MAX_PER_HOUR" envDefault:"10000"`
	// AlertMaxPerMonth is the same in a UTC month (as the stream's monthly quota bounds a key's
	// stream); the rest of the month's matches are given up (monthly_limit).
	AlertMaxPerMonth int64 `env:"ALERT_MAX_PER_MONTH" envDefault:"1000000"`
	// AlertSentKeep is how long Redis remembers the transfers each alert delivered: a batch a
	// stopped replica left uncommitted and read again within it is not sent or charged twice.
	// Each alert's record holds what it delivered in that time (bounded by AlertMaxPerHour).
	AlertSentKeep time.Duration `env:"ALERT_SENT_KEEP" envDefault:"1h"`
	// AlertWebhookAllowPrivate lets webhooks reach loopback, private, link-local, unspecified and
	// multicast addresses (the local stack and tests; never a shared deployment: a caller's URL
	// would reach the cluster's own services).
	AlertWebhookAllowPrivate bool `env:"ALERT_WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	// NaiveMatcher checks every filter for every transfer instead of using the indexes: the
	// baseline `make bench` compares the engine with. Never set it in a deployment.
	NaiveMatcher bool `env:"NAIVE_MATCHER" envDefault:"false"`

	// Removed holds variables of earlier versions, read only so that Validate refuses a
	// deployment still setting one (libs/config ignores unknown variables, so it would run
	// without the limits it believes it set).
	Removed RemovedVars
}

// RemovedVars are the variables the tier table (STREAM_TIERS_FILE) replaced.
type RemovedVars struct {
	Quotas             string `env:"QUOTAS"`
	CreditLimits       string `env:"CREDIT_LIMITS"`
	CreditLedgerPrefix string `env:"CREDIT_LEDGER_PREFIX"`
}

// Quota is one tier's stream quota.
type Quota struct{ Hourly, Monthly int64 }

// Tiers loads the tier table and parses DefaultQuota.
func (c Config) Tiers() (tiers.Table, Quota, error) {
	def, err := parseQuota(c.DefaultQuota)
	if err != nil {
		return tiers.Table{}, def, fmt.Errorf("STREAM_DEFAULT_QUOTA: %w", err)
	}
	t, err := tiers.FromFile(c.TiersFile)
	if err != nil {
		return t, def, fmt.Errorf("STREAM_TIERS_FILE: %w", err)
	}
	return t, def, nil
}

func parseQuota(s string) (Quota, error) {
	h, m, ok := strings.Cut(s, "/")
	hv, err1 := strconv.ParseInt(strings.TrimSpace(h), 10, 64)
	mv, err2 := strconv.ParseInt(strings.TrimSpace(m), 10, 64)
	if !ok || err1 != nil || err2 != nil || hv < 0 || mv < 0 {
		return Quota{}, fmt.Errorf("%q is not <per hour>/<per month> (non-negative integers, 0 for none)", s)
	}
	return Quota{hv, mv}, nil
}

// Validate checks the whole configuration.
func (c Config) Validate() error {
	var p config.Problems
	if err := c.Base.Validate(); err != nil {
		p = append(p, err)
	}
	p.Add(c.Kafka.Check(Prefix))
	if _, err := chains.NewSet(c.Chains); err != nil {
		p.Addf("STREAM_CHAINS: %v", err)
	}
	if _, _, err := c.Tiers(); err != nil {
		p = append(p, err)
	}
	if c.Window <= 0 || c.V2Window <= 0 || c.PingInterval <= 0 || c.WriteTimeout <= 0 || c.Checkpoint <= 0 || c.OffsetsTTL <= 0 {
		p.Addf("STREAM_SESSION_WINDOW, STREAM_V2_WINDOW, STREAM_PING_INTERVAL, STREAM_WRITE_TIMEOUT, STREAM_CHECKPOINT and STREAM_OFFSETS_TTL must be positive")
	}
	if c.Writers < 0 {
		p.Addf("STREAM_WRITERS must not be negative (0: four per core)")
	}
	for _, r := range []struct{ name, value string }{{"STREAM_QUOTAS", c.Removed.Quotas},
		{"STREAM_CREDIT_LIMITS", c.Removed.CreditLimits}, {"STREAM_CREDIT_LEDGER_PREFIX", c.Removed.CreditLedgerPrefix}} {
		if r.value != "" {
			p.Addf("%s is no longer read: stream quotas and credit limits come from the tier table of STREAM_TIERS_FILE (the edge's EDGE_TIERS_FILE) and the credit ledger's keys from the edge's layout; unset it", r.name)
		}
	}
	c.checkSizes(&p)
	c.checkAlerts(&p)
	return p.Err()
}

// AlertsOn reports whether the alerts' webhook delivery runs.
func (c Config) AlertsOn() bool {
	return c.Alerts == "on" || c.Alerts == "" && c.UserLabelsURL != ""
}

// checkAlerts checks the alerts' settings.
func (c Config) checkAlerts(p *config.Problems) {
	switch c.Alerts {
	case "", "on", "off":
	default:
		p.Addf("STREAM_ALERTS must be on, off or empty (on when STREAM_USER_LABELS_URL is set), not %q", c.Alerts)
	}
	if c.Alerts == "on" && c.UserLabelsURL == "" {
		p.Addf("STREAM_ALERTS=on needs STREAM_USER_LABELS_URL: the alerts are read from user-labels")
	}
	if c.AlertsOn() && (c.AlertsGroup == "" || c.AlertsReload <= 0 || c.AlertRetryWindow <= 0 || c.AlertWebhookCooldown <= 0 ||
		c.AlertMaxPerHour <= 0 || c.AlertMaxPerMonth <= 0 || c.AlertSentKeep < time.Second) {
		p.Addf("STREAM_ALERTS_GROUP must not be empty, STREAM_ALERTS_RELOAD, STREAM_ALERT_RETRY_WINDOW, STREAM_ALERT_WEBHOOK_COOLDOWN, STREAM_ALERT_MAX_PER_HOUR and STREAM_ALERT_MAX_PER_MONTH must be positive, and STREAM_ALERT_SENT_KEEP at least 1s")
	}
}

// checkSizes checks the queue, replay, per-key and message bounds.
func (c Config) checkSizes(p *config.Problems) {
	if c.QueuePerFilter < 0 || c.SendBuffer < 0 || c.ReplayMaxBytes < 0 || c.ReplayMaxBytesPerKey < 0 || c.CopyWindow < 0 {
		p.Addf("STREAM_QUEUE_PER_FILTER, STREAM_SEND_BUFFER, STREAM_REPLAY_MAX_BYTES, STREAM_REPLAY_MAX_BYTES_PER_KEY and STREAM_COPY_WINDOW must not be negative (STREAM_SEND_BUFFER 0: the system's default; the replay limits 0: no bound; STREAM_COPY_WINDOW 0: copies are not skipped)")
	}
	if c.QueueMax < c.QueueSize {
		p.Addf("STREAM_QUEUE_MAX (%d) must be at least STREAM_QUEUE_SIZE (%d)", c.QueueMax, c.QueueSize)
	}
	if c.QueueSize <= 0 || c.MaxConnsPerKey <= 0 || c.MaxFilters <= 0 || c.MaxSessionsPerKey <= 0 || c.CatchUpParallel <= 0 || c.MaxCatchUp <= 0 {
		p.Addf("STREAM_QUEUE_SIZE, STREAM_MAX_CONNS_PER_KEY, STREAM_MAX_FILTERS, STREAM_MAX_SESSIONS_PER_KEY, STREAM_CATCHUP_PARALLEL and STREAM_MAX_CATCHUP must be positive")
	}
	if c.MaxSessionFilterBytes <= 0 || c.MessageBurst <= 0 || !(c.MessageRate > 0) || math.IsInf(c.MessageRate, 0) {
		p.Addf("STREAM_MAX_SESSION_FILTER_BYTES, STREAM_MESSAGE_BURST and STREAM_MESSAGE_RATE must be positive (STREAM_MESSAGE_RATE finite)")
	}
}

// Load reads the configuration from the environment.
func Load() (Config, error) {
	var c Config
	err := config.Load(&c, Prefix)
	return c, err
}
