// Package service wires the parts every chainintel deployable shares, so each service's Run is
// a short, explicit list: logger and telemetry, the ops port (metrics, pprof, probes), the
// PostgreSQL pool, Redis, Kafka producers and consumers, and the HTTP server, all started and
// stopped in order by a lifecycle runner.
package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/chainintel/chainintel/libs/config"
	"github.com/chainintel/chainintel/libs/eventbus"
	"github.com/chainintel/chainintel/libs/httpx"
	"github.com/chainintel/chainintel/libs/lifecycle"
	"github.com/chainintel/chainintel/libs/pgstore"
	"github.com/chainintel/chainintel/libs/redisx"
	"github.com/chainintel/chainintel/libs/telemetry"
	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
)

// Base is the configuration every service has. Embed it in a service's Config.
type Base struct {
	HTTPAddr        string        `env:"HTTP_ADDR" envDefault:":8080"`
	OpsAddr         string        `env:"OPS_ADDR" envDefault:":9090"`
	LogLevel        string        `env:"LOG_LEVEL" envDefault:"info"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"25s"`
	// InternalSecret signs caller identity between the edge and services; every service of a
	// deployment shares it.
	InternalSecret string `env:"INTERNAL_SECRET,required" secret:"true"`
	Telemetry      telemetry.Config
}

// Validate checks the base settings.
func (b Base) Validate() error {
	var p config.Problems
	if len(b.InternalSecret) < 16 {
		p.Addf("INTERNAL_SECRET must be at least 16 characters")
	}
	if b.ShutdownTimeout <= 0 {
		p.Addf("SHUTDOWN_TIMEOUT must be positive")
	}
	if err := b.Telemetry.Validate(); err != nil {
		p = append(p, err)
	}
	return p.Err()
}

// Postgres is the database configuration of a service that owns a schema.
type Postgres struct {
	DatabaseURL string `env:"DATABASE_URL,required"`
	MaxConns    int32  `env:"DATABASE_MAX_CONNS" envDefault:"16"`
}

// Redis is the configuration of a service that uses Redis.
type Redis struct {
	URL string `env:"REDIS_URL,required"`
}

// Deps are what a caller may hand a service instead of letting it build them; the zero value
// makes the service build everything from its config.
type Deps struct {
	Logger       *slog.Logger
	Telemetry    *telemetry.Telemetry
	HTTPListener net.Listener // nil: listen on Base.HTTPAddr
	OpsListener  net.Listener // nil: listen on Base.OpsAddr
	// Clock is the time a service that takes one reads (nil: time.Now); tests set it to decide
	// time windows by themselves rather than by how fast the machine runs.
	Clock func() time.Time
}

// Service is a running deployable under construction. Methods add parts; Run starts them.
type Service struct {
	Name   string
	Log    *slog.Logger
	Tel    *telemetry.Telemetry
	Ready  *httpx.Readiness
	Signer *httpx.Signer
	runner *lifecycle.Runner
	base   Base
	deps   Deps
	// kafka and kafkaSec are the brokers and the one Security (TLS, SASL, shared transport and
	// dialer) of every Kafka client of the service; set by WithKafka.
	kafka    *Kafka
	kafkaSec eventbus.Security
	// consumers are the consumers Consume added and the publishers Publisher made, whose broker
	// failures /status shows.
	consumers consumerList
}

// Option is a part of the service New builds before anything starts.
type Option func(*options)

type options struct {
	kafka *Kafka
}

// WithKafka makes the service a Kafka client of cfg's brokers. New builds cfg's TLS
// configuration (reading the CA file) and SASL mechanism once, with the one transport and dialer
// every Kafka client of the service shares (Publisher, Consume, KafkaSecurity), closed after
// them at stop. When they cannot be built New fails, naming the variable and the file, before
// anything starts.
func WithKafka(cfg Kafka) Option {
	return func(o *options) { o.kafka = &cfg }
}

// New builds a service's logger and telemetry and starts its ops port. A service that failed
// after New defers Close, so what was built before the failure is stopped.
func New(ctx context.Context, name string, base Base, deps Deps, opts ...Option) (*Service, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	// Built first: a configuration that cannot be built leaves nothing started to stop.
	var sec eventbus.Security
	if o.kafka != nil {
		var err error
		if sec, err = o.kafka.Security(); err != nil {
			return nil, err
		}
	}
	log := deps.Logger
	if log == nil {
		log = telemetry.NewLogger(os.Stderr, name, base.LogLevel)
	}
	// The ops port's /status shows the newest error the service logged.
	box := &lastErrorBox{}
	log = slog.New(lastErrorHandler{log.Handler(), box})
	tel := deps.Telemetry
	var err error
	if tel == nil {
		tel, err = telemetry.Setup(ctx, name, base.Telemetry)
		if err != nil {
			return nil, err
		}
	}
	s := &Service{
		Name: name, Log: log, Tel: tel, Ready: &httpx.Readiness{}, Signer: httpx.NewSigner(base.InternalSecret),
		runner: lifecycle.New(log, base.ShutdownTimeout), base: base, deps: deps, kafka: o.kafka, kafkaSec: sec,
	}
	if deps.Telemetry == nil {
		s.runner.OnStop("telemetry", tel.Shutdown)
	}
	if o.kafka != nil {
		// Added before every Kafka client, so it stops after all of them.
		s.runner.OnStop("kafka connections", func(context.Context) error { sec.Close(); return nil })
	}
	ln := deps.OpsListener
	if ln == nil {
		if ln, err = net.Listen("tcp", base.OpsAddr); err != nil {
			return nil, errors.Join(fmt.Errorf("ops port %s: %w", base.OpsAddr, err), s.Close())
		}
	}
	s.runner.Add(httpx.ServerPart("ops server", ln, httpx.NewServer(opsHandler(s, box))))
	return s, nil
}

// Postgres connects to the service's database, a dependency of its health (/status), not of
// its readiness (httpx.Readiness says why). It does not
// migrate: migrations run from the `migrate` subcommand (a Helm hook) or the local stack.
func (s *Service) Postgres(ctx context.Context, cfg Postgres) (*pgxpool.Pool, error) {
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: cfg.MaxConns, AppName: s.Name})
	if err != nil {
		return nil, err
	}
	s.Ready.AddDependency("postgres", pool.Ping)
	s.runner.OnStop("postgres", func(context.Context) error { pool.Close(); return nil })
	return pool, nil
}

// Redis connects to Redis, a dependency of the service's health (/status), not of its
// readiness (httpx.Readiness says why).
func (s *Service) Redis(ctx context.Context, cfg Redis) (*redis.Client, error) {
	c, err := redisx.Connect(ctx, cfg.URL, redisx.WithLogger(s.Log))
	if err != nil {
		return nil, err
	}
	s.Ready.AddDependency("redis", func(ctx context.Context) error { return c.Ping(ctx).Err() })
	s.runner.OnStop("redis", func(context.Context) error { return c.Close() })
	return c, nil
}

// Publisher returns a Kafka publisher of the service's brokers (WithKafka), on the service's
// shared transport, that is flushed and closed on stop, after consumers and the HTTP server
// have stopped. o tunes it; its Security, tracer and propagator are the service's.
func (s *Service) Publisher(o ...eventbus.PublisherOptions) *eventbus.Publisher {
	k := s.mustKafka("Publisher")
	var po eventbus.PublisherOptions
	if len(o) > 0 {
		po = o[0]
	}
	po.TracerProvider, po.Propagator, po.Security = s.Tel.TracerProvider, s.Tel.Propagator, s.kafkaSec
	p := eventbus.NewPublisher(k.Brokers, po)
	s.consumers.addPublisher(p)
	s.runner.OnStop("kafka publisher", func(context.Context) error { return p.Close() })
	return p
}

// Consume adds a consumer-group runner for topic of the service's brokers (WithKafka) to the
// service, in group "<service>.<topic>", on the service's shared transport and dialer. tune may
// adjust its options (batch size, start offset).
func Consume[M proto.Message](s *Service, topic string, newMsg func() M, h eventbus.Handler[M], tune ...func(*eventbus.ConsumerOptions)) {
	k := s.mustKafka("Consume")
	o := eventbus.ConsumerOptions{
		Brokers: k.Brokers, Security: s.kafkaSec, Group: s.Name + "." + topic, Topic: topic, Logger: s.Log,
		TracerProvider: s.Tel.TracerProvider, MeterProvider: s.Tel.MeterProvider, Propagator: s.Tel.Propagator,
	}
	for _, f := range tune {
		f(&o)
	}
	c := eventbus.NewConsumer(o, newMsg, h)
	// No readiness check for Kafka: a broker outage is waited out, and failing readiness would
	// only pull the service's replicas or restart its pods. /status shows it (KafkaStatus).
	s.consumers.add(c)
	// Added before the part, so it runs after the part stopped; it closes the reader of a
	// consumer whose Run was never reached (Close after a failed assembly).
	// Its error is logged, not returned: after Run it is the error of Run's own close (a last
	// offset commit failing), which a stop never reported.
	s.runner.OnStop("consumer "+topic+" reader", func(context.Context) error {
		if err := c.Close(); err != nil {
			s.Log.Warn("closing the consumer's reader", "topic", topic, "error", err)
		}
		return nil
	})
	s.runner.Add(lifecycle.Part{Name: "consumer " + topic, Run: c.Run})
}

// LateConsumer counts in /status a consumer the service builds itself, later than the wiring
// (eventbus.NewConsumer joins its group at once, so a consumer whose handler must first load
// its state is built once it has), and returns the function that hands it over once built.
// Until then /status shows it as starting. Safe to call set from any goroutine.
func (s *Service) LateConsumer() (set func(ConsumerView)) {
	s.mustKafka("LateConsumer")
	l := &lateConsumer{}
	s.consumers.add(l)
	return l.set
}

// KafkaSecurity is the service's Kafka security (WithKafka), with the transport and dialer a
// Kafka client the service builds itself (a reader of its own) shares with the others. The
// service closes the transport's connections at stop, after the parts added after New.
func (s *Service) KafkaSecurity() eventbus.Security {
	s.mustKafka("KafkaSecurity")
	return s.kafkaSec
}

// mustKafka is the service's Kafka configuration; a service that did not ask for Kafka at New
// and uses it is a bug of its wiring, found by its first test.
func (s *Service) mustKafka(what string) *Kafka {
	if s.kafka == nil {
		panic("service: " + what + " of a service built without WithKafka")
	}
	return s.kafka
}

// Add adds a custom part (a background worker, a poller).
func (s *Service) Add(p lifecycle.Part) { s.runner.Add(p) }

// OnStop adds a cleanup step, run in reverse order of addition.
func (s *Service) OnStop(name string, fn func(context.Context) error) { s.runner.OnStop(name, fn) }

// Engine returns a gin engine with the shared middleware and identity verification.
func (s *Service) Engine() *gin.Engine {
	e := httpx.NewEngine(httpx.EngineOptions{Service: s.Name, Logger: s.Log, TracerProvider: s.Tel.TracerProvider,
		MeterProvider: s.Tel.MeterProvider})
	e.Use(httpx.IdentityMiddleware(s.Signer))
	return e
}

// Run serves h on the HTTP port with every part added so far and blocks until ctx ends or a
// part fails. On stop, readiness fails first, then the HTTP server drains, then the rest stops
// in reverse order of addition.
func (s *Service) Run(ctx context.Context, h http.Handler) error {
	ln := s.deps.HTTPListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.base.HTTPAddr); err != nil {
			return errors.Join(fmt.Errorf("http port %s: %w", s.base.HTTPAddr, err), s.Close())
		}
	}
	s.runner.Add(httpx.ServerPart("http server", ln, httpx.NewServer(h)))
	s.runner.OnStop("readiness", func(context.Context) error { s.Ready.MarkStopping(); return nil })
	s.Ready.MarkStarted()
	s.Log.Info("service started", "http", ln.Addr().String())
	err := s.runner.Run(ctx)
	s.Log.Info("service stopped", "error", err)
	return err
}

// Close stops everything added so far, in reverse order, when Run was never reached: a service
// defers it right after New, so a failure while assembling (a database away, a bad file) still
// closes the ops port, pools, publishers and Kafka connections built before it. After Run (which
// stops them itself) it does nothing.
func (s *Service) Close() error {
	return s.runner.Stop(context.Background())
}

// Migrate connects to cfg's database, migrates schema from fsys and disconnects.
func Migrate(ctx context.Context, cfg Postgres, schema string, fsys fs.FS, log *slog.Logger) error {
	pool, err := pgstore.Connect(ctx, cfg.DatabaseURL, pgstore.Options{MaxConns: 2, AppName: schema + "-migrate"})
	if err != nil {
		return err
	}
	defer pool.Close()
	return pgstore.Migrate(ctx, pool, schema, fsys, log)
}

// Main runs a service binary: it cancels the context on SIGINT/SIGTERM, calls run with the
// command-line arguments, and exits non-zero (printing the error) when run fails.
func Main(run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// LogConfig logs the effective configuration with secrets masked.
func LogConfig(log *slog.Logger, cfg any) {
	log.Info("configuration", "config", config.LogValue(cfg))
}
